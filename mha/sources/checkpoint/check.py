"""Our layer against the checkpoint's own forward: the attention weights and the attention block's output.

The checkpoint's weights are its ``attentions[layer]``; its output is what its attention block's output
module returns (a forward hook on the family's
:meth:`~mha.sources.families.base.Family.block_output`), before dropout and the residual connection: both from
the full forward our layer's input was read from
(:meth:`~mha.sources.checkpoint.checkpoint_model.Checkpoint.full_forward`).
The check applies only where the page's mask is the one the checkpoint used: its real keys (no
``[PAD]``), under the causal mask where the family is causal; any other mask is a "what if" (on an
image, every patch sees every other), and the differences are then not computed (they would be a
false failure).

Shape legend: H = heads, L = tokens, D = d_model.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from mha.masks import causal_mask
from mha.memory import CPU
from mha.sources.checkpoint.checkpoint_model import Checkpoint, Encoded

__all__ = ["CHECKPOINT_TOLERANCE", "CheckpointCheck", "compare"]

#: Our float32 layer against the checkpoint's own float32 forward: the same sums in another order differ by
#: float32 rounding (about 1e-7 of the numbers' size), far below this; a wrong weight or mask differs by far more.
#: The weights lie in [0, 1]; the output's tolerance is this times its largest |value| where that is above 1:
#: float32 keeps about 7 significant digits, so sums of larger numbers differ by proportionally more (a model of
#: SmolLM2-135M's size built here with 0.2-wide random weights differed by 4.6e-5 on outputs of that order).
CHECKPOINT_TOLERANCE = 1e-5


@dataclass(frozen=True)
class CheckpointCheck:
    """Our layer against the checkpoint's own forward for the same text.

    ``applies`` is ``False`` when the page's mask is not the one the checkpoint used (a
    causal or window "what if" on an encoder, any mask on an image encoder, or ``[PAD]`` left
    unmasked): ``reason`` says which, and the differences are then not computed (they would be
    a false failure).
    ``how`` names the message saying what was compared (it differs per family).
    """

    checkpoint: str
    layer: int
    applies: bool
    reason: str = ""  # "what_if", "what_if_image" or "pad_unmasked" when it does not apply
    max_abs_weights: float = 0.0
    max_abs_output: float = 0.0
    tolerance: float = CHECKPOINT_TOLERANCE
    how: str = "check.checkpoint_how"
    output_scale: float = 1.0  # the checkpoint's largest |output| (at least 1): the output's tolerance grows with it

    @property
    def output_tolerance(self) -> float:
        """The output's tolerance: :attr:`tolerance` × :attr:`output_scale`."""
        return self.tolerance * max(1.0, self.output_scale)

    @property
    def passed(self) -> bool:
        """The weights within :attr:`tolerance` and the output within :attr:`output_tolerance` (the checkpoint runs
        in float32)."""
        return self.applies and self.max_abs_weights <= self.tolerance and self.max_abs_output <= self.output_tolerance


def compare(
    checkpoint: Checkpoint,
    encoded: Encoded,
    layer: int,
    weights: Tensor,
    output: Tensor,
    mask: Tensor | None,
    device: torch.device = CPU,
) -> CheckpointCheck:
    """Max |Δ| of our per-head weights and output against the checkpoint's forward on ``encoded``, at ``layer``.

    Args:
        checkpoint: the loaded checkpoint (its name is the check's).
        encoded: the text or image our layer read, as the checkpoint's forward reads it.
        layer: the layer compared (a layer the checkpoint has).
        weights: our (1, H, L, L) softmax weights.
        output: our (1, L, D) output.
        mask: our bool keep-mask (broadcastable to (1, H, L, L)) or ``None``.
        device: where the checkpoint's forward runs (the run's); the differences are taken on the CPU.

    Returns:
        A :class:`CheckpointCheck`; where the masks differ, one that does not apply, with the reason.
    """
    family = checkpoint.family
    how = family.check_how
    length = len(encoded.tokens)
    keys = encoded.keys.view(1, 1, 1, length)  # (1, 1, 1, L): the checkpoint's real keys
    used = keys.expand(1, 1, length, length)  # (1, 1, L, L)
    if family.causal:
        used = used & causal_mask(length, device=keys.device)  # (1, 1, L, L)
    ours = torch.ones_like(used) if mask is None else mask.cpu().expand(1, 1, length, length)  # (1, 1, L, L)
    if not torch.equal(ours, used):
        reason = "pad_unmasked" if torch.equal(ours & keys, used) else "what_if"  # only [PAD] keys differ?
        if family.reads_image:
            reason = "what_if_image"  # every patch sees every other: any mask is a "what if"
        return CheckpointCheck(checkpoint.name, layer, applies=False, reason=reason, how=how)
    forward = checkpoint.full_forward(encoded, device)  # the one our layer's input was read from
    theirs_weights = forward.attentions[layer].cpu()  # (1, H, L, L)
    theirs_output = forward.block_outputs[layer].cpu()  # (1, L, D)
    return CheckpointCheck(
        checkpoint.name,
        layer,
        applies=True,
        max_abs_weights=float((weights.detach().cpu().float() - theirs_weights).abs().max()),
        max_abs_output=float((output.detach().cpu().float() - theirs_output).abs().max()),
        how=how,
        output_scale=max(1.0, float(theirs_output.abs().max())),
    )
