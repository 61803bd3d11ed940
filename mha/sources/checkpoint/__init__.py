"""The checkpoint source: one layer of a real checkpoint, run by the scratch engine, one job per module.

* :mod:`.origin` -- where a checkpoint's files are (a name on the server's list, or a learner's hub id) and
  its sizes from ``config.json``;
* :mod:`.checkpoint_model` -- a loaded checkpoint: its model, its forward (one at a time), a layer copied into our
  ``MultiHeadAttention``; :mod:`.text` and :mod:`.image` -- its inputs made from a text (the tokenizer)
  or an image (the image processor);
* :mod:`.loader` -- loading, once per process, at most ``MAX_LOADED`` kept (least recently used first out);
* :mod:`.notes` -- the notes a run shows about its tokens and its family;
* :mod:`.check` -- our layer against the checkpoint's own attention weights and block output;
* :mod:`.generation` -- a causal checkpoint's greedy generation, our layer following it through its KV cache;
  :mod:`.generation_service` -- generations in the background (:mod:`mha.jobs`);
* :mod:`.source` -- :class:`~mha.sources.checkpoint.source.PretrainedSource`, what the pipeline asks.

What differs between architectures is its family's (:mod:`mha.sources.families`, found by ``config.json``'s
``model_type``): no module here names a family. ``transformers`` is imported on first use only (the
default page never imports it).
"""
