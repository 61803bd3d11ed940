"""Messages of lab 14: attention that costs less, linear and sparse."""

MESSAGES: dict[str, dict[str, str]] = {
    "nav.lab.efficient": {"en": "14 · Linear and sparse", "zh": "14 · 线性与稀疏注意力"},
    "lab.efficient.title": {
        "en": "Lab 14 · Attention that costs less: linear and sparse",
        "zh": "实验 14 · 更省的注意力：线性与稀疏",
    },
    "lab.efficient.intro": {
        "en": "Two ways around the L × L matrix, and they are different bargains. **Linear attention** changes the "
        "function: its work grows like L instead of L², so it does fewer multiply-adds once L passes d (from which "
        "length it takes less time, the measurement below finds), but it is not softmax attention. **Sparse "
        "attention** keeps softmax but lets each token see only some keys, and it saves something only when the "
        "code skips the blocks it never needs; a mask on the dense matrix saves nothing. See both on your own "
        "tokens, then measure them.",
        "zh": "绕开 L × L 矩阵有两条路，它们是两种不同的交换。**线性注意力**换掉了函数本身："
        "它的计算量按 L 而不是 L² 增长，所以 L 超过 d 之后乘加次数更少（从哪个长度起时间更少，由下面的测量找出），"
        "但它已经不是 softmax 注意力。**稀疏注意力**保留 softmax，只让每个词元看一部分键；只有代码真的跳过"
        "用不到的块时才省得下来，在稠密矩阵上加掩码什么也省不了。先在你自己的词元上看这两种做法，再测量它们。",
    },
    "lab.efficient.explain": {
        "en": "**Linear attention** (Katharopoulos et al. 2020, *Transformers are RNNs*). Softmax attention gives "
        "query i the output Σ_j exp(q_i·k_j/√d) v_j / Σ_j exp(q_i·k_j/√d). Replace exp(q·k) by a product of "
        "features φ(q)·φ(k) with φ(x) = elu(x) + 1 (positive everywhere) and the sum can be regrouped: "
        "out_i = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j)). The bracket S = φ(K)ᵀV is a d × d matrix "
        "computed once for all queries: O(L · d²) work and memory d² instead of O(L² · d) and L². Counted in "
        "multiply-adds (about 2 · L² · d against 2 · L · d²) the two are equal at L = d and linear attention does "
        "less only past it; where the measured times cross depends on the kernels and the machine as well, and "
        "the measurement below finds it (this project's measurement on a 2-core CPU with d = 64 found it at "
        "L = 512, well after L = d). Causal: query i may only read keys j ≤ i, so "
        "S and z = Σ φ(k_j) become running sums, S_i = S_(i−1) + φ(k_i) v_iᵀ: a recurrent network whose state is "
        "S, which is the paper's title. Run as that recurrence it keeps one S_i and z_i at a time; this page "
        "computes them all at once with cumulative sums, so it keeps every S_i and z_i: L · (d² + d) numbers per "
        "head.\n\n"
        "It is **another function**, not an approximation that gets closer with more of anything: its weights "
        "φ(q_i)·φ(k_j) / Σ_j φ(q_i)·φ(k_j) are not softmax's, and nothing in the formula tends to them. A model "
        "trained with it learns other weights; dropping it into a layer trained with softmax changes the output.\n\n"
        "**Sparse attention** keeps softmax but lets query i see only some keys. Longformer (Beltagy et al. 2020): "
        "a sliding window |i − j| ≤ w (w keys on each side; the paper's w is the whole window), "
        "plus a few global tokens (such as [CLS]) that see and are seen by every "
        "token. BigBird (Zaheer et al. 2020): the same at the granularity of blocks of b tokens, a window of "
        "blocks, global blocks and a few random blocks per row. With a fixed number k of kept blocks per row the "
        "work is O(L · k · b · d), linear in L.\n\n"
        "**A mask saves nothing.** Given to a dense run as a mask, the pattern still costs all L × L scores: they "
        "are computed, then overwritten with −∞. The saving comes only from code that never computes the blocks "
        "the pattern drops (here: gather, per query block, its kept key blocks; real systems use block-sparse "
        "kernels). The same numbers either way, which this page checks; the cost is measured below.",
        "zh": "**线性注意力**：Katharopoulos 等 2020 年的论文（Transformers are RNNs）。"
        "softmax 注意力给查询 i 的输出是 "
        "Σ_j exp(q_i·k_j/√d) v_j / Σ_j exp(q_i·k_j/√d)。把 exp(q·k) 换成特征的内积 φ(q)·φ(k)，其中 "
        "φ(x) = elu(x) + 1（处处为正），求和就可以重新组合："
        "out_i = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j))。括号里的 S = φ(K)ᵀV 是一个 d × d 矩阵，"
        "对所有查询只算一次：计算量 O(L · d²)、内存 d²，而不是 O(L² · d) 和 L²。按乘加次数算"
        "（约 2 · L² · d 对 2 · L · d²），两者在 L = d 时相等，只有超过这个长度线性注意力才算得更少；"
        "实测时间在哪里交叉还取决于内核和机器，下面的测量会找出来（本项目在一台双核 CPU 上以 d = 64 测得的交叉点是 "
        "L = 512，远在 L = d 之后）。"
        "因果情形：查询 i 只能读 j ≤ i 的键，所以 S 和 z = Σ φ(k_j) "
        "变成累加和，S_i = S_(i−1) + φ(k_i) v_iᵀ：一个以 S 为状态的循环网络（RNN），这正是论文标题的意思。"
        "按这个循环逐步运行时，一次只保留一个 S_i 和 z_i；本页用累加和一次算出全部，所以保留了每一个 S_i 和 z_i："
        "每个头 L · (d² + d) 个数。\n\n"
        "它是**另一个函数**，而不是某种“越多越接近”的近似：它的权重 φ(q_i)·φ(k_j) / Σ_j φ(q_i)·φ(k_j) "
        "不是 softmax 的权重，公式里也没有任何东西会趋向它们。用它训练的模型会学到别的权重；"
        "把它直接换进用 softmax 训练好的层里，输出就变了。\n\n"
        "**稀疏注意力**保留 softmax，只让查询 i 看一部分键。Longformer（Beltagy 等，2020）："
        "滑动窗口 |i − j| ≤ w（每侧 w 个键；论文里的 w 指整个窗口），"
        "再加几个全局词元（例如 [CLS]），它们看所有词元，也被所有词元看。"
        "BigBird（Zaheer 等，2020）：同样的思路，但以 b 个词元为一块：块的窗口、全局块，以及每行几个随机块。"
        "每行保留的块数 k 固定时，计算量是 O(L · k · b · d)，与 L 成线性关系。\n\n"
        "**掩码什么也省不了。**把这种模式作为掩码交给稠密计算，仍要付出全部 L × L 个分数的代价："
        "先算出来，再改写成 −∞。只有从不计算被丢弃的块的代码才能省下来（这里：对每个查询块收集它保留的键块；"
        "实际系统使用块稀疏内核）。两种算法得到相同的数值，本页会检查这一点；代价在下面测量。",
    },
    # ---------------------------------------------------------------- linear attention on the tokens
    "lab.efficient.linear_title": {
        "en": "Linear attention next to softmax, on your tokens",
        "zh": "在你的词元上并排比较线性注意力与 softmax",
    },
    "lab.efficient.causal": {"en": "Causal (query i reads keys j ≤ i)", "zh": "因果（查询 i 只读 j ≤ i 的键）"},
    "lab.efficient.head": {"en": "Head shown", "zh": "显示的头"},
    "lab.efficient.panel.softmax": {"en": "softmax(q·k/√d)", "zh": "softmax(q·k/√d)"},
    "lab.efficient.panel.linear": {
        "en": "linear: φ(q)·φ(k), normalised",
        "zh": "线性：φ(q)·φ(k)，归一化后",
    },
    "lab.efficient.weights_caption": {
        "en": "The same q and k (the playground's seeded layer, d_model = 64) in both panels. Linear attention never "
        "builds the right-hand matrix: it is drawn here to show the weights its output amounts to. Its weight on a "
        "key is proportional to φ(q)·φ(k), a sum of products of positive features; softmax's to exp(q·k/√d), which "
        "turns each difference of scores into a ratio of weights. Which rows come out flatter follows from the "
        "numbers, not from the formula: counted below.",
        "zh": "两幅图用的是同样的 q 和 k（游乐场的随机种子层，d_model = 64）。线性注意力从不构造右边这个矩阵："
        "画出来只是为了显示它的输出相当于什么权重。它给一个键的权重正比于 φ(q)·φ(k)，即正的特征两两相乘之和；"
        "softmax 的权重正比于 exp(q·k/√d)，它把分数之差变成权重之比。哪些行更平取决于具体的数，而不是公式："
        "下面数出来。",
    },
    "lab.efficient.rows_flatter": {
        "en": "Head {head}, each row's weights measured by their entropy (higher: flatter). Rows flatter under "
        "linear attention than under softmax: {flatter} of {rows}; sharper: {sharper}; the same: {same}.",
        "zh": "第 {head} 个头，用每一行权重的熵来衡量（熵越高越平）。线性注意力下比 softmax 更平的行："
        "{flatter} 行（共 {rows} 行）；更尖的：{sharper} 行；相同的：{same} 行。",
    },
    "lab.efficient.check.weights": {
        "en": "Weights: softmax against linear attention's implied weights, every head.",
        "zh": "权重：softmax 与线性注意力隐含的权重相比，所有头。",
    },
    "lab.efficient.check.outputs": {
        "en": "Outputs: softmax attention against linear attention, every head.",
        "zh": "输出：softmax 注意力与线性注意力相比，所有头。",
    },
    "lab.efficient.check.state": {
        "en": "Linear attention two ways: φ(Q)(φ(K)ᵀV) with the d × d state, against its L × L implied weights "
        "times V.",
        "zh": "线性注意力的两种算法：用 d × d 状态的 φ(Q)(φ(K)ᵀV)，与 L × L 隐含权重乘以 V 相比。",
    },
    "lab.efficient.check.running_sum": {
        "en": "Causal linear attention two ways: the running sums S_i, z_i (the recurrent form) against the masked "
        "L × L implied weights times V.",
        "zh": "因果线性注意力的两种算法：累加和 S_i、z_i（循环形式）与加了掩码的 L × L 隐含权重乘以 V 相比。",
    },
    "lab.efficient.differs": {
        "en": "max |difference| = {diff:.3g} > {tol:.0e}: another function, not the same numbers rounded",
        "zh": "最大 |差值| = {diff:.3g} > {tol:.0e}：是另一个函数，而不是同一组数的舍入误差",
    },
    "lab.efficient.agrees": {
        "en": "max |difference| = {diff:.2e} ≤ {tol:.0e}: on these tokens the two agree",
        "zh": "最大 |差值| = {diff:.2e} ≤ {tol:.0e}：在这些词元上两者一致",
    },
    "lab.efficient.metric.matrix": {
        "en": "softmax: L × L weights (L = {length})",
        "zh": "softmax：L × L 权重（L = {length}）",
    },
    "lab.efficient.metric.state": {"en": "linear: d × d state + z (d = {d})", "zh": "线性：d × d 状态 + z（d = {d}）"},
    "lab.efficient.metric.state_causal": {
        "en": "linear, causal: S_i and z_i at every position (d = {d})",
        "zh": "线性，因果：每个位置的 S_i 和 z_i（d = {d}）",
    },
    "lab.efficient.yours.one": {"en": "Your one token is", "zh": "你的 1 个词元"},
    "lab.efficient.yours.many": {"en": "Your {count} tokens are", "zh": "你的 {count} 个词元"},
    "lab.efficient.state_caption": {
        "en": "Numbers held per head. Softmax's grow like L², the state does not grow with L at all: with d = {d} "
        "it is the bigger one until L passes about d. {yours} below that: here linear attention holds more, not "
        "less.",
        "zh": "每个头要保存的数。softmax 的按 L² 增长，状态则完全不随 L 增长：d = {d} 时，"
        "直到 L 超过大约 d 之前，状态都更大。{yours}在这之下：这里线性注意力保存的数更多，而不是更少。",
    },
    "lab.efficient.state_caption_past": {
        "en": "Numbers held per head. Softmax's grow like L², the state does not grow with L at all: with d = {d} "
        "it is the bigger one until L passes about d. {yours} past that: here the state holds fewer numbers "
        "(time is another matter: see the measurement below).",
        "zh": "每个头要保存的数。softmax 的按 L² 增长，状态则完全不随 L 增长：d = {d} 时，"
        "直到 L 超过大约 d 之前，状态都更大。{yours}已经超过了它：这里状态保存的数更少"
        "（时间是另一回事：见下面的测量）。",
    },
    "lab.efficient.state_caption_causal": {
        "en": "Numbers held per head. With the causal mask this page keeps the running sums S_i and z_i at every "
        "position (all computed at once with cumulative sums): L × (d × d + d) numbers, growing like L, while "
        "softmax's grow like L². With d = {d} the running sums hold more until L passes d × d + d = {limit}. "
        "{yours} below that: here linear attention holds more, not less. A loop over the positions would keep "
        "only the current S_i and z_i: d × d + d = {limit} numbers.",
        "zh": "每个头要保存的数。有因果掩码时，本页保留每个位置的累加和 S_i 和 z_i（用累加和一次全部算出）："
        "L × (d × d + d) 个数，按 L 增长，而 softmax 的按 L² 增长。d = {d} 时，直到 L 超过 d × d + d = {limit} "
        "之前，累加和保存的数都更多；{yours}在这之下：这里线性注意力保存的数更多，而不是更少。"
        "逐个位置循环计算只需保留当前的 S_i 和 z_i：d × d + d = {limit} 个数。",
    },
    "lab.efficient.state_caption_causal_past": {
        "en": "Numbers held per head. With the causal mask this page keeps the running sums S_i and z_i at every "
        "position (all computed at once with cumulative sums): L × (d × d + d) numbers, growing like L, while "
        "softmax's grow like L². With d = {d} the running sums hold more until L passes d × d + d = {limit}. "
        "{yours} past that: here the running sums hold fewer numbers.",
        "zh": "每个头要保存的数。有因果掩码时，本页保留每个位置的累加和 S_i 和 z_i（用累加和一次全部算出）："
        "L × (d × d + d) 个数，按 L 增长，而 softmax 的按 L² 增长。d = {d} 时，直到 L 超过 d × d + d = {limit} "
        "之前，累加和保存的数都更多；{yours}已经超过了它：这里累加和保存的数更少。",
    },
    # ---------------------------------------------------------------- sparse patterns on the tokens
    "lab.efficient.sparse_title": {"en": "Sparse patterns on your tokens", "zh": "你的词元上的稀疏模式"},
    "lab.efficient.sparse_intro": {
        "en": "Light cells may attend (1), dark ones are dropped (0). Each pattern is run twice on the same q, k, v: "
        "densely with the pattern as a mask, and computing only the blocks it keeps.",
        "zh": "浅色格子可以关注（1），深色格子被丢弃（0）。每种模式在同样的 q、k、v 上运行两次："
        "一次是把模式作为掩码的稠密计算，一次只计算它保留的块。",
    },
    "lab.efficient.longformer": {
        "en": "**Longformer**: window + global tokens",
        "zh": "**Longformer**：窗口 + 全局词元",
    },
    "lab.efficient.bigbird": {
        "en": "**BigBird**: blocks of window, global and random",
        "zh": "**BigBird**：窗口块、全局块和随机块",
    },
    "lab.efficient.window": {"en": "Window w (keys each side)", "zh": "窗口 w（每侧的键数）"},
    "lab.efficient.global_tokens": {"en": "Global tokens", "zh": "全局词元"},
    "lab.efficient.block": {"en": "Block size b (tokens)", "zh": "块大小 b（词元数）"},
    "lab.efficient.window_blocks": {"en": "window blocks", "zh": "窗口块"},
    "lab.efficient.global_blocks": {"en": "global blocks", "zh": "全局块"},
    "lab.efficient.random_blocks": {"en": "random blocks", "zh": "随机块"},
    "lab.efficient.panel.longformer": {"en": "Longformer", "zh": "Longformer"},
    "lab.efficient.panel.bigbird": {"en": "BigBird", "zh": "BigBird"},
    "lab.efficient.metric.kept": {"en": "{pattern}: entries kept", "zh": "{pattern}：保留的格子"},
    "lab.efficient.kept_caption.most": {
        "en": "Of the {entries} (L × L, L = {length}). On this sentence both patterns keep more than half of them; the "
        "window and the blocks stay the same size as L grows, so the share kept falls like 1/L.",
        "zh": "占全部 {entries}（L × L，L = {length}）的比例。在这个句子上两种模式都保留了一半以上；L 变长时窗口和块的"
        "大小不变，所以保留的比例按 1/L 下降。",
    },
    "lab.efficient.kept_caption.few": {
        "en": "Of the {entries} (L × L, L = {length}). On this sentence both patterns keep half of them or less; the "
        "window and the blocks stay the same size as L grows, so the share kept falls like 1/L.",
        "zh": "占全部 {entries}（L × L，L = {length}）的比例。在这个句子上两种模式保留的都不超过一半；"
        "L 变长时窗口和块的大小不变，所以保留的比例按 1/L 下降。",
    },
    "lab.efficient.kept_caption.mixed": {
        "en": "Of the {entries} (L × L, L = {length}). On this sentence {more} keeps more than half of them and {less} "
        "half or less; the window and the blocks stay the same size as L grows, so the share kept falls like 1/L.",
        "zh": "占全部 {entries}（L × L，L = {length}）的比例。在这个句子上 {more} 保留了一半以上，{less} 不超过一半；"
        "L 变长时窗口和块的大小不变，所以保留的比例按 1/L 下降。",
    },
    "lab.efficient.entries.one": {"en": "one entry", "zh": "1 个格子"},
    "lab.efficient.entries.many": {"en": "{count} entries", "zh": "{count} 个格子"},
    "lab.efficient.check.longformer": {
        "en": "Longformer: only the kept blocks computed, against the dense run with the mask.",
        "zh": "Longformer：只计算保留的块，与带掩码的稠密计算相比。",
    },
    "lab.efficient.check.bigbird": {
        "en": "BigBird: only the kept blocks computed, against the dense run with the mask.",
        "zh": "BigBird：只计算保留的块，与带掩码的稠密计算相比。",
    },
    # ---------------------------------------------------------------- the cost
    "lab.efficient.cost_title": {"en": "What they cost as L grows", "zh": "L 变长时它们的代价"},
    "lab.efficient.block_b": {"en": "Block size b", "zh": "块大小 b"},
    "lab.efficient.cap": {"en": "Measure up to L =", "zh": "测量到 L ="},
    "lab.efficient.cost_note": {
        "en": "One head, random q, k, v of size d. Sparse runs use BigBird's pattern: one window block each side, one "
        "global block, one random block per row. Lengths stop at L = {cap}: this server is shared.",
        "zh": "一个头，随机的 q、k、v，维度为 d。稀疏计算使用 BigBird 的模式：每侧一个窗口块、一个全局块、"
        "每行一个随机块。长度最多到 L = {cap}：这台服务器是共享的。",
    },
    "lab.efficient.press": {
        "en": "Press Measure to time softmax and linear attention, and the dense, dense masked and block-skipping "
        "runs, at L = 32, 64, … up to your cap (several seconds).",
        "zh": "点击“测量”，在 L = 32、64、……直到你设定的上限，为 softmax 与线性注意力、"
        "以及稠密、带掩码的稠密和跳过块的计算计时（需要几秒钟）。",
    },
    "lab.efficient.failed": {
        "en": "The measurement did not finish (the server may be overloaded). Try a lower cap or fewer rounds.",
        "zh": "测量没有完成（服务器可能负载过高）。请降低上限或减少计时轮数。",
    },
    "lab.efficient.progress.start": {
        "en": "Starting the measurement in a Python process of its own (it loads PyTorch first)…",
        "zh": "正在一个单独的 Python 进程里开始测量（它先加载 PyTorch）……",
    },
    "lab.efficient.progress.warmup": {
        "en": "{done} of {total} parts measured. Now: one untimed run of every method at every length (warm-up)…",
        "zh": "已测完 {done} / {total} 部分。现在：每种方法在每个长度上先不计时地运行一遍（预热）……",
    },
    "lab.efficient.progress.time": {
        "en": "{done} of {total} parts measured. Now: the five methods' times at L = {length}…",
        "zh": "已测完 {done} / {total} 部分。现在：L = {length} 时五种方法的用时……",
    },
    "lab.efficient.progress.memory": {
        "en": "{done} of {total} parts measured. Now: the five methods' peak memory at L = {length}…",
        "zh": "已测完 {done} / {total} 部分。现在：L = {length} 时五种方法的内存峰值……",
    },
    "lab.efficient.progress.again": {
        "en": "(Attempt {attempt} of {attempts}: the times broke their work's growth, so they are measured again.)",
        "zh": "（第 {attempt} 次，共最多 {attempts} 次：用时的增长与计算量不符，所以重新计时。）",
    },
    "lab.efficient.method.softmax": {"en": "softmax attention", "zh": "softmax 注意力"},
    "lab.efficient.method.linear": {"en": "linear attention", "zh": "线性注意力"},
    "lab.efficient.method.dense": {"en": "dense, no mask", "zh": "稠密，无掩码"},
    "lab.efficient.method.dense_masked": {"en": "dense with the mask", "zh": "稠密加掩码"},
    "lab.efficient.method.block_sparse": {"en": "only the kept blocks", "zh": "只算保留的块"},
    "lab.efficient.axis.length": {"en": "sequence length L", "zh": "序列长度 L"},
    "lab.efficient.axis.ms": {"en": "milliseconds per call", "zh": "每次调用的毫秒数"},
    "lab.efficient.axis.mib": {"en": "peak memory allocated (MiB)", "zh": "分配内存的峰值（MiB）"},
    "lab.efficient.chart.linear": {"en": "softmax vs linear", "zh": "softmax 与线性"},
    "lab.efficient.chart.sparse": {"en": "dense vs sparse", "zh": "稠密与稀疏"},
    "lab.efficient.chart.time": {"en": "Time: {what}", "zh": "时间：{what}"},
    "lab.efficient.chart.memory": {"en": "Memory: {what}", "zh": "内存：{what}"},
    "lab.efficient.what.time": {"en": "time", "zh": "时间"},
    "lab.efficient.what.memory": {"en": "memory", "zh": "内存"},
    "lab.efficient.crossing": {
        "en": "In {what}, {cheaper} costs less than {dearer} from L = {length} on (measured).",
        "zh": "{what}上，从 L = {length} 起{cheaper}比{dearer}更省（实测）。",
    },
    "lab.efficient.no_crossing": {
        "en": "In {what}, {cheaper} did not stay below {dearer} up to L = {longest}.",
        "zh": "{what}上，直到 L = {longest}，{cheaper}都没有一直低于{dearer}。",
    },
    "lab.efficient.linear_summary": {
        "en": "Counted in multiply-adds, softmax attention's work grows like L² · d and linear attention's like "
        "L · d²: with d = {d} the counts are equal at L = {d}. Where the times cross depends on the kernels and "
        "the machine too; measured here:",
        "zh": "按乘加次数算，softmax 注意力的计算量按 L² · d 增长，线性注意力按 L · d² 增长：d = {d} 时两者在 "
        "L = {d} 相等。时间在哪里交叉还取决于内核和机器；这里的实测：",
    },
    "lab.efficient.sparse_summary": {
        "en": "At L = {length}: dense {dense} ({dense_ms:.2f} ms), dense with the mask {masked} ({masked_ms:.2f} "
        "ms), only the kept blocks {sparse} ({sparse_ms:.2f} ms).",
        "zh": "在 L = {length}：稠密 {dense}（{dense_ms:.2f} 毫秒），稠密加掩码 {masked}（{masked_ms:.2f} 毫秒），"
        "只算保留的块 {sparse}（{sparse_ms:.2f} 毫秒）。",
    },
    "lab.efficient.mask.nothing": {
        "en": "The mask saved nothing: the masked run held no less memory and took no less time than the dense one.",
        "zh": "掩码什么也没省：带掩码的计算占用的内存不比稠密计算少，用的时间也不比它少。",
    },
    "lab.efficient.mask.time": {
        "en": "The masked run took less time than the dense one at this length, though it still computes all L × L "
        "scores (and then applies the mask); it held no less memory.",
        "zh": "在这个长度上，带掩码的计算用的时间比稠密计算少，尽管它仍然算出全部 L × L 个分数（再加上掩码）；"
        "它占用的内存并不更少。",
    },
    "lab.efficient.mask.memory": {
        "en": "The masked run held less memory than the dense one at this length, though it still computes all "
        "L × L scores (and then applies the mask); it took no less time.",
        "zh": "在这个长度上，带掩码的计算占用的内存比稠密计算少，尽管它仍然算出全部 L × L 个分数（再加上掩码）；"
        "它用的时间并不更少。",
    },
    "lab.efficient.mask.both": {
        "en": "The masked run held less memory and took less time than the dense one at this length, though it still "
        "computes all L × L scores (and then applies the mask).",
        "zh": "在这个长度上，带掩码的计算占用的内存和用的时间都比稠密计算少，尽管它仍然算出全部 L × L 个分数"
        "（再加上掩码）。",
    },
    "lab.efficient.chart_caption": {
        "en": "Both axes are logarithmic: slope 2 is L², slope 1 is L. Points are medians, vertical bars the middle "
        "half of the rounds. At short lengths fixed overheads (Python, the gathering of blocks) dominate.",
        "zh": "两个坐标轴都是对数刻度：斜率 2 是 L²，斜率 1 是 L。点是中位数，竖条是中间一半的轮次。"
        "长度较短时，固定开销（Python、收集块）占主导。",
    },
    "lab.efficient.table_title": {"en": "All numbers", "zh": "全部数据"},
    "lab.efficient.col.method": {"en": "method", "zh": "方法"},
    "lab.efficient.col.ms": {"en": "ms per call (median)", "zh": "每次毫秒（中位数）"},
    "lab.efficient.col.spread": {"en": "ms, middle half", "zh": "毫秒，中间一半"},
    "lab.efficient.col.peak": {"en": "peak memory", "zh": "内存峰值"},
}
