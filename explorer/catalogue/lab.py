"""The Lab's strings (pages/8_lab.py): where each setting comes from, the presets' measured claims,
the head detector's scores, the ideal pattern's meaning, memory and failures."""

STRINGS = {
    "lab_intro": (
        (
            "A tiny attention model trains here, live, on a task whose ideal attention pattern is known. Its "
            "hyperparameters come from two places, each setting from one of them (listed under the controls); press "
            "Play and watch the loss fall and the heads take shape."
        ),
        (
            "一个小注意力模型在这里实时训练，任务的理想注意力模式是已知的。它的超参数来自两个地方，每个设置只来自其中一处"
            "（列在控件下方）；按“播放”，看损失下降、注意力头逐渐成形。"
        ),
    ),
    "lab_task_repeat": ("repeat a segment (next token, causal)", "重复片段（预测下一个，因果）"),
    "lab_pos": ("Positions", "位置编码"),
    "lab_pos_sidebar": ("the sidebar's ({pos})", "侧边栏的（{pos}）"),
    "lab_settings_where": (
        (
            "**Set here:** task, length, layers, MLP, learning rate, batch, steps, the comparison, and RoPE or ALiBi "
            "in place of the sidebar's positional encoding. **From the sidebar:** heads ({heads}), d_model "
            "({d_model}), d_k ({d_k}, also d_q), d_v ({d_v}), score ({score}), temperature, mask, window, dropout, "
            "positional encoding ({pos}) and seed ({seed}); variant: {kernel} (the Lab trains full, sliding-window, "
            "linear and causal linear attention)."
        ),
        (
            "**在这里设置：**任务、长度、层数、MLP、学习率、批大小、步数、对比，以及用 RoPE 或 ALiBi 代替侧边栏的位置编码。"
            "**来自侧边栏：**头数（{heads}）、d_model（{d_model}）、d_k（{d_k}，也是 d_q）、d_v（{d_v}）、打分函数"
            "（{score}）、温度、掩码、窗口、dropout、位置编码（{pos}）和随机种子（{seed}）；变体：{kernel}"
            "（实验室可训练完整、滑动窗口、线性和因果线性注意力）。"
        ),
    ),
    "lab_b_is": ("B is A with {changes}.", "B 与 A 相同，只是 {changes}。"),
    "lab_cli": ("The same runs from the command line:", "用命令行复现同样的训练："),
    "lab_memory_ok": (
        "Estimated peak memory of a run: {need} (at most {limit} MiB per run on this server).",
        "每个训练的峰值内存估计：{need}（本服务器每个训练最多 {limit} MiB）。",
    ),
    "lab_preset_induction": (
        (
            "Predict the next token of a sequence in which a segment repeats, copied from a random place after a "
            "random-length prefix: no fixed offset finds the answer. Only an induction mechanism does: a first-layer "
            "head that looks at the previous token, then a second-layer head that looks at the token after the "
            "earlier occurrence of the current one. A has one layer, B two."
        ),
        (
            "预测一个序列的下一个词元：序列中有一段从随机位置（在随机长度的前缀之后）复制而来，没有任何固定的偏移能找到答案。"
            "只有归纳机制能做到：第一层的一个头看前一个词元，第二层的一个头看当前词元上一次出现之后的那个词元。A 一层，B 两层。"
        ),
    ),
    "lab_preset_heads": (
        (
            "Sort digits with one head (A) or four heads of a quarter of the width each (B); the score table measures "
            "how far each of B's heads is from the others."
        ),
        "用一个头（A）或四个各占四分之一宽度的头（B）给数字排序；分数表度量 B 的每个头与其他头相差多远。",
    ),
    "lab_measured": (
        (
            "Measured on seeds {seeds} ({record}): A {a_acc} held-out accuracy, 99 % on {a_n} of {n} ({a_steps}); "
            "B {b_acc}, 99 % on {b_n} of {n} ({b_steps})."
        ),
        (
            "在随机种子 {seeds} 上实测（{record}）：A 验证准确率 {a_acc}，{n} 次中 {a_n} 次达到 99%（{a_steps}）；"
            "B {b_acc}，{n} 次中 {b_n} 次达到 99%（{b_steps}）。"
        ),
    ),
    "lab_after_steps": ("after {steps} steps", "用了 {steps} 步"),
    "lab_never": ("never", "从未达到"),
    "lab_measured_induction": (
        (
            "B's induction score (its second layer's best head) {b_ind} against {a_ind} for A's one layer; B's "
            "first layer's previous-token score {b_prev}; B's phase change at step {phase}."
        ),
        "B 的归纳分数（第二层最好的头）{b_ind}，A 的单层为 {a_ind}；B 第一层的前一词元分数 {b_prev}；B 的相变在第 {phase} 步。",
    ),
    "lab_measured_heads_same": (
        (
            "Several heads do not learn sort faster here: B's heads sit {apart} apart from the other heads' mean "
            "(total variation: 0 = the same pattern, 1 = disjoint), so they split the work only partly."
        ),
        (
            "在这里多个头并不能更快学会排序：B 的各个头与其他头平均模式的距离为 {apart}（总变差：0 = 相同，1 = 完全不重叠），"
            "所以它们只是部分地分工。"
        ),
    ),
    "lab_measured_heads_faster": (
        (
            "B's heads reach 99 % sooner; they sit {apart} apart from the other heads' mean (total variation: "
            "0 = the same pattern, 1 = disjoint)."
        ),
        "B 的多个头更早达到 99%；它们与其他头平均模式的距离为 {apart}（总变差：0 = 相同，1 = 完全不重叠）。",
    ),
    "lab_no_record": (
        "Not measured yet: run python benchmarks/lab_presets.py (its record is read here).",
        "尚未实测：请运行 python benchmarks/lab_presets.py（这里读取它的记录）。",
    ),
    "lab_scores": (
        (
            "Head detector scores on 128 held-out examples (TransformerLens's definitions: the attention on the "
            "pattern over all attention, over the queries the pattern has a key for; 1 = all of it there)"
        ),
        (
            "128 个验证样例上的注意力头检测分数（TransformerLens 的定义：落在模式上的注意力占全部注意力的比例，"
            "只计模式中有对应键的查询；1 = 全部落在那里）"
        ),
    ),
    "lab_score_layer": ("layer", "层"),
    "lab_score_head": ("head", "头"),
    "lab_score_prev": ("previous token (t − 1)", "前一词元（t − 1）"),
    "lab_score_induction": ("induction (after the earlier occurrence)", "归纳（上一次出现之后）"),
    "lab_score_apart": ("apart from the other heads", "与其他头的差距"),
    "lab_phase": ("phase change, step {step}", "相变，第 {step} 步"),
    "lab_ideal_x": ("key: position·token", "键：位置·词元"),
    "lab_ideal_y": ("query: position·token", "查询：位置·词元"),
    "lab_ideal_ticks": (
        "Each tick is a position and the token there (3·7: position 3 holds 7).",
        "每个刻度是一个位置和该位置上的词元（3·7：位置 3 上是 7）。",
    ),
    "lab_ideal_reverse": (
        "Each output position looks at the input position holding its answer: output i at input L − 1 − i.",
        "每个输出位置都看向存放其答案的输入位置：输出 i 看输入 L − 1 − i。",
    ),
    "lab_ideal_sort": (
        (
            "Each output position looks at the input positions holding its answer: output i at the places that "
            "hold the i-th smallest digit (shared equally when several do)."
        ),
        "每个输出位置都看向存放其答案的输入位置：输出 i 看存放第 i 小数字的位置（有几个就平分）。",
    ),
    "lab_ideal_shift": (
        "Each output position looks at the input position holding its answer: output i at input i − 1.",
        "每个输出位置都看向存放其答案的输入位置：输出 i 看输入 i − 1。",
    ),
    "lab_ideal_repeat": (
        (
            "In the copied segment each position looks at the token after the earlier occurrence of its own token: "
            "that is the next token (rows outside the copy are not scored)."
        ),
        "在复制的片段中，每个位置看向它自己的词元上一次出现之后的那个词元：那就是下一个词元（片段外的行不计分）。",
    ),
    "lab_ideal_recall": (
        "The last position (the key asked for) looks at the value stored right after that key earlier on.",
        "最后一个位置（被询问的键）看向前面紧跟在这个键之后存放的值。",
    ),
    "lab_failed_why": ("{name} failed: {why}", "{name} 失败：{why}"),
    "lab_failed_killed": (
        "the system stopped its worker (signal {signal}), most likely for lack of memory; use a smaller batch or length.",
        "系统终止了它的工作进程（信号 {signal}），很可能是内存不足；请减小批大小或长度。",
    ),
    "lab_failed_other": ("its worker reported: {detail}", "工作进程报告：{detail}"),
}

ERRORS_ZH = {
    "lab_dropout": (
        "Dropout {value} 超出了实验室可训练的范围（0 到 {high}）。",
        "请选择 0 到 {high} 之间的 dropout。",
    ),
    "lab_memory": (
        "用这些设置训练大约需要 {need} MiB（批大小 {batch}，长度 {L}，{heads} 个头），超过了本服务器每个实验室训练可用的 {limit} MiB。",
        "请减小批大小、缩短长度、减少头数，或减小 d_model/d_k/d_v。",
    ),
    "lab_memory_additive": (
        "用这些设置训练大约需要 {need} MiB（批大小 {batch}，长度 {L}，{heads} 个头），超过了本服务器每个实验室训练可用的 {limit} MiB。",
        "请改用 scaled_dot 打分（加性打分需要 批大小·H·L·L·d_k 个数），或减小批大小或 d_k。",
    ),
    "lab_out_of_memory": (
        "训练这些设置时本机内存不足（估计约需 {need} MiB）。",
        "请减小批大小（现在为 {batch}）或缩短长度（现在为 {L}），或为训练腾出内存。",
    ),
    "lab_side_alone": ("--side 选择预设的 A 或 B 训练，但没有给出 --preset。", "请加上 --preset，可选：{options}。"),
}
