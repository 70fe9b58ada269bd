"""Keys in actions: a clip keyed on deform bones (keyframes) or on a rig's controls (on_controls), routed between the two (actions) and measured (figures)."""
