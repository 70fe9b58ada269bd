"""A job's steps shared by the command line and the panel: its settings (settings), the rig it runs on (rig) and its result written into the scene (apply)."""
