"""The 3D Viewport sidebar: its settings (properties), its drawing (sidebar), its operators and the job it runs in the background (run)."""
