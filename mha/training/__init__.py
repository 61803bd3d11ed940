"""Training the scratch attention on small tasks, so that its heads learn something (pure PyTorch).

- :mod:`mha.training.tasks` -- the tasks: deterministic data, targets, the relations heads should learn;
- :mod:`mha.training.model` -- embeddings + ``x + MultiHeadAttention(x)`` layers + linear readouts;
- :mod:`mha.training.vit` -- the ``digits`` task's small Vision Transformer around the same attention;
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
