"""The command line: the distillation command (distill) with its flags (parser), its output files (outputs) and the Blender-version shims they need (compat), and the motion-judge command (judge)."""
