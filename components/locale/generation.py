"""Words of the generation panel: a causal checkpoint continuing the learner's text with a KV cache."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "gen.title": {"en": "Generation with a KV cache", "zh": "用 KV 缓存逐词生成"},
    "gen.what": {
        "en": "A causal language model does not run attention once over a fixed sentence: it writes one token at a "
        "time, and each new token's query looks at the keys and values kept from every earlier step, the **KV "
        "cache**. Here the checkpoint continues your text greedily (the most likely token each time), and this "
        "layer's copy keeps its own cache: the prompt fills it in one step (step 0, all its rows at once); then "
        "each step appends one key and one value per K/V head and attends one query row against all of them.",
        "zh": "因果语言模型并不是在一个固定的句子上只算一次注意力：它一次写一个词元，每个新词元的查询都去看之前每一步"
        "保留下来的键和值，即 **KV 缓存**。这里由检查点贪心地（每次取最可能的词元）续写你的文本，本层的副本维护"
        "它自己的缓存：提示词在一步里（第 0 步，所有行一起）填满它；之后每一步为每个 K/V 头追加一个键和一个值，"
        "再用一行查询对它们全部做注意力。",
    },
    "gen.control": {"en": "New tokens to generate (generate)", "zh": "要生成的新词元数（generate）"},
    "gen.control_help": {
        "en": "0 to {high}: greedy, one step per token. The generation runs in the background; Stop keeps the "
        "steps made so far.",
        "zh": "0 到 {high}：贪心解码，每个词元一步。生成在后台运行；“停止”会保留已经完成的步骤。",
    },
    "gen.hint": {
        "en": "Set a number of new tokens to watch the checkpoint write them, one cached step at a time.",
        "zh": "设置新词元的个数，就能看到检查点一步一步、借助缓存把它们写出来。",
    },
    "gen.queued": {
        "en": "Waiting for a free slot: at most {running} generations run at once here.",
        "zh": "等待空位：这里同时最多运行 {running} 个生成。",
    },
    "gen.stop": {"en": "Stop", "zh": "停止"},
    "gen.running": {
        "en": "Generating: {done} of {total} tokens written",
        "zh": "生成中：已写出 {done} / {total} 个词元",
    },
    "gen.failed": {"en": "The generation failed: {message}", "zh": "生成失败：{message}"},
    "gen.start": {"en": "Generate {count} tokens after this text", "zh": "在这段文本后生成 {count} 个词元"},
    "gen.new_text": {
        "en": "No generation yet for this text, layer and number of tokens.",
        "zh": "这段文本、这一层和这个词元数还没有生成结果。",
    },
    "gen.text": {
        "en": "**Your text** and **what the checkpoint wrote**:",
        "zh": "**你的文本**与**检查点写出的内容**：",
    },
    "gen.stopped_after": {
        "en": "Stopped after {count} of {requested} tokens: the text, the steps (0 to {last}) and the sinks below "
        "are those of the {count} tokens written, and the cost is measured from that length.",
        "zh": "在 {requested} 个词元中写到第 {count} 个时停止：下面的文本、各步（第 0 到第 {last} 步）和注意力汇"
        "只来自已写出的这 {count} 个词元，代价也从这个长度算起。",
    },
    "gen.eos": {
        "en": "The checkpoint's token {count} was its end-of-text token; it stopped there, as its own `generate` does.",
        "zh": "检查点在第 {count} 个词元写出了它的文本结束词元并在那里停止，与它自己的 `generate` 相同。",
    },
    "gen.after_rope": {"en": ", after RoPE", "zh": "，经过 RoPE"},
    "gen.step": {"en": "Step", "zh": "步骤"},
    "gen.step_prefill": {
        "en": "step 0 · the prompt, {length} rows at once → wrote “{token}”",
        "zh": "第 0 步 · 提示词，{length} 行一起 → 写出“{token}”",
    },
    "gen.step_one": {
        "en": "step {index} · reads “{reads}” at position {position} → wrote “{token}”",
        "zh": "第 {index} 步 · 读入位置 {position} 的“{reads}” → 写出“{token}”",
    },
    "gen.shapes": {
        "en": "- `q {q}` (B, h, rows, d_k): the {rows} query row(s) this step computes{rope}\n"
        "- `@ K_cacheᵀ [1, {kv}, {d_k}, {t}]` (B, h_kv, d_k, t), {shared}\n"
        "- → `scores [1, {h}, {rows}, {t}]` × 1/√{d_k}, softmax over the keys each row may read (a new token's "
        "row: all t) → `weights`\n"
        "- the cache after this step: `K, V {cache}` (B, h_kv, t, d_k); appended positions: {appended}",
        "zh": "- `q {q}` (B, h, 行数, d_k)：这一步计算的 {rows} 行查询{rope}\n"
        "- `@ K_cacheᵀ [1, {kv}, {d_k}, {t}]` (B, h_kv, d_k, t)，{shared}\n"
        "- → `scores [1, {h}, {rows}, {t}]` × 1/√{d_k}，对每一行能读到的键做 softmax（新词元的那一行：全部 t 个）→ "
        "`weights`\n"
        "- 这一步之后的缓存：`K, V {cache}` (B, h_kv, t, d_k)；追加的位置：{appended}",
    },
    "gen.kv_repeated": {
        "en": "each of the {kv} K/V heads repeated for its {group} query heads",
        "zh": "{kv} 个 K/V 头各自为它的 {group} 个查询头复制",
    },
    "gen.kv_own": {
        "en": "one K/V head per query head: nothing is repeated",
        "zh": "每个查询头有自己的 K/V 头：不做复制",
    },
    "gen.chart": {
        "en": "Weights of the step's last row, per head, over the t = {t} cached keys (outlined: the {n} entries this "
        "step appended)",
        "zh": "这一步最后一行在每个头上对 t = {t} 个缓存键的权重（红框：这一步追加的 {n} 个条目）",
    },
    "gen.check_pass": {
        "en": "✓ This step's weights equal the checkpoint's own for it (its `attentions[{layer}]` of this forward): "
        "max |Δ| = {diff} (tolerance {tol}).",
        "zh": "✓ 这一步的权重与检查点自己这一步的权重（这次前向的 `attentions[{layer}]`）一致：最大差 |Δ| = {diff}"
        "（容差 {tol}）。",
    },
    "gen.check_fail": {
        "en": "✗ This step's weights differ from the checkpoint's own: max |Δ| = {diff} (tolerance {tol}).",
        "zh": "✗ 这一步的权重与检查点自己的不一致：最大差 |Δ| = {diff}（容差 {tol}）。",
    },
    "gen.cost_title": {"en": "With a cache and without", "zh": "有缓存与无缓存"},
    "gen.cost": {
        "en": "Without a cache every step recomputes the keys and values of the whole text, O(t²) work per step "
        "for this layer's scores; with it a step computes one query row against the t cached keys, O(t). The price "
        "is memory: 2 · layers · h_kv · d_k = 2 · {layers} · {kv} · {d_k} = {numbers} numbers per token × {itemsize} "
        "bytes ({dtype}) = {bytes} per token; {total} for this text's {t} tokens. One step of this layer, timed here "
        "(its float32 copy on the CPU):",
        "zh": "没有缓存时，每一步都要重新计算整段文本的键和值，这一层的打分每步是 O(t²) 的工作量；有缓存时，每一步只用"
        "一行查询对 t 个缓存的键计算，O(t)。代价是内存：每个词元 2 · 层数 · h_kv · d_k = 2 · {layers} · {kv} · "
        "{d_k} = {numbers} 个数 × {itemsize} 字节（{dtype}）= 每个词元 {bytes}；这段文本的 {t} 个词元共 {total}。"
        "这里实测的这一层的一步（它在 CPU 上的 float32 副本）：",
    },
    "gen.cost.t": {"en": "t (tokens so far)", "zh": "t（已有词元数）"},
    "gen.cost.cached": {"en": "with the cache, ms", "zh": "有缓存，毫秒"},
    "gen.cost.recompute": {"en": "recomputing, ms", "zh": "重新计算，毫秒"},
    "gen.cost.ratio": {"en": "recompute / cached", "zh": "重新计算 / 有缓存"},
    "gen.cost.bytes": {"en": "this layer's cache", "zh": "本层缓存"},
    "gen.cost_note": {
        "en": "Medians of {repeats} runs of this layer alone (float32, on the CPU); the whole model repeats it in "
        "every layer (docs/PERFORMANCE.md: `python -m bench --only decode`).",
        "zh": "只计这一层（float32，CPU），{repeats} 次运行的中位数；整个模型在每一层都重复这些计算"
        "（见 docs/PERFORMANCE.md：`python -m bench --only decode`）。",
    },
    "gen.sinks_title": {"en": "Where the weight goes as the text grows", "zh": "文本变长时，权重落在哪里"},
    "gen.sinks_what": {
        "en": "Per layer: the share of attention on the first token in the row that chose each new token (the "
        "prompt's last token, then each token written), averaged over the heads and the steps; the line is the even "
        "share, the mean of 1/t ({uniform}); a layer is named a sink above {times}× it.",
        "zh": "每一层：选出每个新词元的那一行（先是提示词的最后一个词元，然后是每个写出的词元）落在第一个词元上的权重，"
        "对各头和各步取平均；横线是平均份额，即 1/t 的平均（{uniform}）；超过它的 {times} 倍即称为注意力汇。",
    },
    "gen.sinks": {
        "en": "**Attention sinks** in layer(s) {layers}: there the first token takes more than {times}× the even "
        "share. Many trained models park weight a head does not need on the first token, whatever it says "
        "(StreamingLLM, Xiao et al. 2023). A sliding-window cache that evicts the oldest tokens throws that "
        "token away first, and such models then break down; StreamingLLM keeps the first few tokens (four in the "
        "paper) in the cache beside the window.",
        "zh": "第 {layers} 层出现了**注意力汇（attention sink）**："
        "那里的第一个词元拿到的权重超过平均份额的 {times} 倍。"
        "许多训练好的模型会把某个头用不上的权重停放在第一个词元上，不管它是什么词（StreamingLLM，Xiao 等，2023）。"
        "滑动窗口缓存如果先丢掉最早的词元，最先丢掉的就是它，这类模型随后就会失常；StreamingLLM 的做法是"
        "在窗口之外一直保留最前面的几个词元（论文中为 4 个）。",
    },
    "gen.busy": {
        "en": "The server is busy: {waiting} generations are waiting for a slot. Try again in a moment.",
        "zh": "服务器正忙：已有 {waiting} 个生成在等待空位。请稍后再试。",
    },
    "gen.no_sinks_short": {
        "en": "No layer can pass {times}× the even share here: the even share, the mean of 1/t over these steps, is "
        "{uniform}, and {times}× it is {limit}, at least all the weight a row has (1). Generate after a longer text "
        "to look for sinks.",
        "zh": "这里没有哪一层能超过平均份额的 {times} 倍：平均份额，即这些步骤上 1/t 的平均，是 {uniform}，它的 "
        "{times} 倍是 {limit}，不小于一行的全部权重（1）。请在更长的文本之后生成，再看有没有注意力汇。",
    },
    "gen.no_sinks": {
        "en": "No layer puts more than {times}× the even share on the first token here.",
        "zh": "这里没有哪一层在第一个词元上的权重超过平均份额的 {times} 倍。",
    },
    "gen.chart.layer": {"en": "layer", "zh": "层"},
    "gen.chart.share": {"en": "weight on token 0", "zh": "第 0 个词元上的权重"},
    "gen.chart.head": {"en": "head", "zh": "头"},
    "gen.chart.key": {"en": "cached key", "zh": "缓存的键"},
    "gen.chart.weight": {"en": "weight", "zh": "权重"},
    "gen.cannot": {
        "en": "`generate` = {count} is for a causal checkpoint's page: choose weights = pretrained and a GPT-2, Llama "
        "or Qwen2 checkpoint. {why}",
        "zh": "`generate` = {count} 只适用于因果语言模型检查点的页面：请把权重来源设为预训练，并选择 GPT-2、Llama 或 "
        "Qwen2 检查点。{why}",
    },
    "gen.cannot.random": {
        "en": "Random weights have no vocabulary to write with.",
        "zh": "随机权重没有可以用来写字的词表。",
    },
    "gen.cannot.trained": {
        "en": "The small trained models are not language models of your text.",
        "zh": "这里训练的小模型不是你这段文本的语言模型。",
    },
    "gen.cannot.encoder": {
        "en": "This checkpoint cannot generate: an encoder or an image model, or files without a language-model head.",
        "zh": "这个检查点不能生成：它是编码器或图像模型，或者文件里没有语言模型头。",
    },
    # ------------------------------------------------------------ where the generation ran
    "gen.ran_on": {"en": "Generated on **{device}**.", "zh": "在 **{device}** 上生成。"},
    "gen.out_of_memory": {
        "en": "{device} ran out of memory generating {tokens} tokens with {checkpoint} ({parameters} parameters, "
        "{megabytes} MiB in float32), so it generated on the CPU instead.",
        "zh": "{device} 用 {checkpoint}（{parameters} 个参数，float32 下 {megabytes} MiB）生成 {tokens} 个词元时"
        "内存不足，所以改在 CPU 上生成。",
    },
}
