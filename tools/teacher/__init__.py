"""Training data, training and the phrase table of the embedded teacher and its judge.

``python -m tools.teacher embed --out phrases.npz`` writes the phrase table (needs the sentence
encoder); ``python -m tools.teacher train --out DIR --phrases phrases.npz …`` renders the motion
library (:mod:`.dataset`) and trains the teacher and the judge (:mod:`.train`, a CUDA GPU).
"""
