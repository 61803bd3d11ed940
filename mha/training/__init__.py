"""Training the scratch attention on small tasks, so that its heads learn something (pure PyTorch).

- :mod:`mha.training.tasks` -- the tasks: deterministic data, targets, the relations heads should learn, each
  task's model and what the page says of it;
- :mod:`mha.training.model` -- the sequence tasks' model: embeddings + ``x + MultiHeadAttention(x)`` layers + linear
  readouts;
- :mod:`mha.training.classifier` -- the Pre-Norm classifier with a readout from [CLS], around the same attention;
  :mod:`mha.training.digits_model` (the digits' patches) and :mod:`mha.training.reviews_model` (the reviews'
  characters) are it with their own embeddings;
- :mod:`mha.training.loop` -- ``train(task, d_model, num_heads, seed) -> (model, history)``;
- :mod:`mha.training.service` -- one process-wide service: each model trained once, shared, a few at a time.

From a script::

    from mha.training import train
    model, history = train("previous_and_first", d_model=64, num_heads=2, seed=0)
    print(f"accuracy {100 * history.accuracy:.1f} %")
"""

from mha.training.loop import TrainingHistory, train
from mha.training.tasks import TASK_LAYERS, make_task, task_layers

__all__ = ["TASK_LAYERS", "TrainingHistory", "make_task", "task_layers", "train"]
