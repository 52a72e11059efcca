"""Every UI string, in English and Simplified Chinese. Option values stay language-neutral;
labels go through ``label()`` in a ``format_func``."""

from __future__ import annotations

import threading

import streamlit as st

LANGS = {"en": "English", "zh": "简体中文"}

STRINGS: dict[str, tuple[str, str]] = {
    # app and navigation
    "app_title": ("Attention Explorer", "注意力机制探索器"),
    "page_steps": ("Step by step", "逐步计算"),
    "page_multihead": ("Multi-head", "多头注意力"),
    "page_cross": ("Cross-attention", "交叉注意力"),
    "page_tutorial": ("Tutorial", "教程复现"),
    "page_variants": ("Variants", "注意力变体"),
    "page_complexity": ("Complexity", "复杂度"),
    "page_model": ("Real model", "真实模型"),
    "language": ("Language", "语言"),
    "page_home": ("Start", "开始"),
    "home_intro": (
        (
            "Attention, computed in front of you: change the sentence, the heads, d_q/d_k/d_v, the mask or the "
            "score function in the sidebar and every step recomputes. Start with Step by step, or pick a page."
        ),
        (
            "注意力机制，当场计算给你看：在侧边栏修改句子、头数、d_q/d_k/d_v、掩码或打分函数，每一步都会重新计算。"
            "从“逐步计算”开始，或选择下面任意一页。"
        ),
    ),
    "home_steps": (
        "Tokens → embeddings → Q, K, V → scores → scaling → mask → softmax → context, one step at a time.",
        "词元 → 嵌入 → Q、K、V → 分数 → 缩放 → 掩码 → softmax → 上下文，一步一步来。",
    ),
    "home_multihead": (
        "Several heads side by side, their concatenation, W_o, residual and LayerNorm.",
        "多个头并排显示，以及拼接、W_o、残差与层归一化。",
    ),
    "home_cross": (
        "Queries from one sentence, keys and values from another.",
        "查询来自一个句子，键和值来自另一个句子。",
    ),
    "home_tutorial": ("The source tutorial's printed numbers, recomputed.", "重新计算原教程中打印的每个数字。"),
    "home_variants": (
        "Sliding window, dilated, block, linear, Performer and Linformer against full attention.",
        "滑动窗口、膨胀、分块、线性、Performer 与 Linformer，与完整注意力对比。",
    ),
    "home_complexity": (
        "Time and memory against sequence length, measured on this server.",
        "在本服务器上实测时间和内存随序列长度的变化。",
    ),
    "home_model": (
        "A trained encoder's 72 heads, one of them taken apart step by step.",
        "一个训练好的编码器的 72 个头，并逐步拆解其中一个。",
    ),
    # sidebar
    "sec_input": ("Input", "输入"),
    "sentence": ("Sentence", "句子"),
    "sentence_help": (
        "Words are split on spaces; Chinese/Japanese characters are tokens of their own.",
        "按空格切分单词；中文/日文每个字是一个词元。",
    ),
    "source": ("Second sentence (cross-attention, padding batch)", "第二个句子（交叉注意力、填充批次）"),
    "sec_dims": ("Dimensions", "维度"),
    "heads": ("Heads", "头数"),
    "layout": ("Multi-head layout", "多头布局"),
    "d_model": ("d_model (embedding size)", "d_model（嵌入维度）"),
    "d_q": ("d_q", "d_q"),
    "d_k": ("d_k", "d_k"),
    "d_v": ("d_v", "d_v"),
    "standard_dims": (
        "Standard layout: each head uses d_model / heads = {d} for d_q, d_k and d_v.",
        "标准布局：每个头的 d_q、d_k、d_v 都是 d_model / 头数 = {d}。",
    ),
    "sec_scores": ("Scores and mask", "分数与掩码"),
    "score": ("Score function", "打分函数"),
    "temperature": ("Softmax temperature", "Softmax 温度"),
    "mask": ("Mask", "掩码"),
    "causal": ("Also causal (no looking ahead)", "同时因果（不能看未来）"),
    "window": ("Window w (each side)", "窗口 w（每侧）"),
    "dilation": ("Dilation", "膨胀间隔"),
    "global_tokens": ("Global tokens g", "全局词元数 g"),
    "block": ("Block size b", "块大小 b"),
    "sec_model": ("Model", "模型"),
    "pos": ("Positional encoding", "位置编码"),
    "init": ("Weight initialisation", "权重初始化"),
    "seed": ("Seed", "随机种子"),
    "dropout": ("Dropout on the weights", "对权重做 Dropout"),
    "dropout_p": ("Dropout p", "Dropout 概率 p"),
    "residual_norm": ("Residual + LayerNorm", "残差 + 层归一化"),
    "fix_prefix": ("Fix:", "修改建议："),
    "url_fixed": (
        (
            "The link had values that cannot be used for: {names}. Those settings start from their defaults; "
            "change them here."
        ),
        "链接中以下设置的值无法使用：{names}。这些设置已恢复默认值，可在此处修改。",
    ),
    "invalid": ("These settings cannot be computed: {msg}", "当前设置无法计算：{msg}"),
    "reset": ("Reset to the tutorial's settings", "恢复教程默认设置"),
    # option labels
    # kernel labels (a variant without an entry shows its spec's own label)
    "kernel_full": ("Full (materialised)", "完整注意力（显式矩阵）"),
    "kernel_sdpa": ("Full (fused SDPA)", "完整注意力（融合 SDPA）"),
    "kernel_sliding_window": ("Sliding window", "滑动窗口"),
    "kernel_dilated": ("Dilated window", "膨胀窗口"),
    "kernel_global_window": ("Global + window", "全局 + 窗口"),
    "kernel_block": ("Block-local", "分块局部"),
    "kernel_linear_elu": ("Linear (elu+1)", "线性注意力（elu+1）"),
    "kernel_causal_linear": ("Causal linear (elu+1)", "因果线性注意力（elu+1）"),
    "kernel_performer": ("Performer (FAVOR+)", "Performer（FAVOR+）"),
    "kernel_linformer": ("Linformer", "Linformer"),
    "kernel_flex": ("FlexAttention (compiled)", "FlexAttention（编译）"),
    "pooled": ("mean of {r}×{c} blocks", "{r}×{c} 块的平均"),
    "opt_dot": ("dot  q·k", "点积 q·k"),
    "opt_scaled_dot": ("scaled dot  q·k/√d_k", "缩放点积 q·k/√d_k"),
    "opt_additive": ("additive (Bahdanau)", "加性（Bahdanau）"),
    "opt_none": ("none", "无"),
    "opt_causal": ("causal", "因果"),
    "opt_padding": ("padding (batch with the second sentence)", "填充（与第二个句子组成批次）"),
    "opt_sliding_window": ("sliding window", "滑动窗口"),
    "opt_dilated": ("dilated window", "膨胀窗口"),
    "opt_global_window": ("global + window", "全局 + 窗口"),
    "opt_block": ("block-local", "分块局部"),
    "opt_sinusoidal": ("sinusoidal", "正弦"),
    "opt_learned": ("learned (random)", "可学习（随机）"),
    "opt_tutorial": ("tutorial (torch.rand)", "教程（torch.rand）"),
    "opt_standard": ("standard (nn.Linear)", "标准（nn.Linear）"),
    "opt_layout_tutorial": ("tutorial: own weights per head, concatenated", "教程：每头独立权重，拼接"),
    "opt_layout_standard": ("standard: d_model split across heads + W_o", "标准：d_model 按头切分 + W_o"),
    # step page
    "steps_intro": (
        "Change anything in the sidebar: every step below recomputes. Hover a cell for its exact value.",
        "修改侧边栏中的任何设置，下面每一步都会重新计算。将鼠标悬停在单元格上可查看精确数值。",
    ),
    "your_sentence": ("Your sentence, as typed:", "你输入的句子："),
    "focus": ("Focus token (query)", "关注的词元（查询）"),
    "head": ("Head", "头"),
    "step": ("Step", "步骤"),
    "st_tokens": ("1 Tokens & embeddings", "1 词元与嵌入"),
    "st_qkv": ("2 Q, K, V", "2 Q、K、V"),
    "st_scores": ("3 Scores & scaling", "3 分数与缩放"),
    "st_mask": ("4 Mask", "4 掩码"),
    "st_softmax": ("5 Softmax in stages", "5 分阶段 Softmax"),
    "st_output": ("6 Weights & context", "6 权重与上下文"),
    "sec_variant": ("Variant and mask", "注意力变体与掩码"),
    "kernel": ("Attention variant", "注意力变体"),
    "variant_steps": (
        (
            "Variant: **{name}**. The steps below are its own, computed on its efficient path; the weights on the "
            "other pages are the L × L matrix it amounts to."
        ),
        "注意力变体：**{name}**。下面是它自己的计算步骤（走高效路径）；其他页面上的权重是它等价的 L × L 矩阵。",
    ),
    "variant_other_pages": (
        "Variant: **{name}**. Each head's weights are the L × L matrix it amounts to; Step by step shows how it computes.",
        "注意力变体：**{name}**。每个头的权重是它等价的 L × L 矩阵；它怎样计算见“逐步计算”。",
    ),
    "uniform_beside": (
        "Uniform attention (every query averages the values): max |Δ output| {u:.4g}",
        "均匀注意力（每个查询直接平均所有值）：max |Δ 输出| {u:.4g}",
    ),
    "uniform_help": (
        (
            "How far this variant's output is from full attention's; the line below gives the same distance for uniform "
            "attention, the baseline any approximation must beat."
        ),
        "该变体的输出与完整注意力输出的距离；下面一行是均匀注意力的同一距离，任何近似都应该比它好。",
    ),
    "no_better_than_uniform": (
        (
            "On this sentence this approximation is no better than uniform attention: simply averaging the values is as "
            "close to full attention."
        ),
        "在这个句子上，这个近似并不比均匀注意力更好：直接平均所有值与完整注意力的距离也一样近。",
    ),
    "uniform_line": ("uniform attention (max |Δ|)", "均匀注意力（max |Δ|）"),
    "cx_noisy": (
        (
            "Rows that varied a lot between runs (IQR above 25% of the median, see status): {n}. They are drawn but "
            "left out of the slopes and crossovers. Run the sweep again on a quieter machine."
        ),
        (
            "有 {n} 行在多次运行之间波动很大（四分位距超过中位数的 25%，见“状态”列）：图中仍画出，但不参与斜率和交叉点的计算。"
            "请在更空闲的机器上再运行一次。"
        ),
    ),
    "page_lab": ("Lab", "实验室"),
    "home_lab": (
        (
            "Train a tiny attention model live on a toy task and watch its heads learn the pattern; change a "
            "hyperparameter and see what it does."
        ),
        "在玩具任务上实时训练一个小注意力模型，看它的注意力头学出模式；改一个超参数，看它起什么作用。",
    ),
    "lab_presets": ("Presets: one click, one claim to see", "预设：一键查看一个结论"),
    "lab_b_off": ("no comparison", "不比较"),
    "lab_b_positions": ("B: with positions", "B：加上位置编码"),
    "lab_b_scaling": ("B: scaled scores", "B：缩放分数"),
    "lab_b_induction": ("B: two layers", "B：两层"),
    "lab_b_heads": ("B: four heads", "B：四个头"),
    "lab_b_linear": ("B: linear attention", "B：线性注意力"),
    "lab_preset_positions": (
        (
            "Reverse a sequence with no positional encoding (A) and with sinusoidal positions (B). Without positions "
            "attention cannot tell places apart, so A stays stuck; B learns the anti-diagonal."
        ),
        (
            "不带位置编码（A）与带正弦位置编码（B）地反转序列。没有位置信息，注意力分不清位置，A 一直学不会；"
            "B 学出反对角线。"
        ),
    ),
    "lab_preset_scaling": (
        (
            "d_k = 512: unscaled dot products (A) against scores divided by √d_k (B). Large unscaled scores saturate "
            "the softmax and slow learning; watch B reach 99 % first."
        ),
        (
            "d_k = 512：不缩放的点积（A）对比除以 √d_k 的分数（B）。不缩放时分数很大，softmax 饱和、学习变慢；"
            "看 B 先达到 99%。"
        ),
    ),
    "lab_preset_linear": (
        (
            "Reverse with full softmax attention (A) and with linear attention (B): the pattern linear attention can "
            "form is blurrier."
        ),
        "用完整 softmax 注意力（A）和线性注意力（B）反转序列：线性注意力能形成的模式更模糊。",
    ),
    "lab_task_reverse": ("reverse", "反转"),
    "lab_task_sort": ("sort digits 0–2", "数字 0–2 排序"),
    "lab_task_shift": ("shift by one", "右移一位"),
    "lab_task_recall": ("associative recall", "联想回忆"),
    "lab_pos_rope": ("RoPE (rotary)", "RoPE（旋转）"),
    "lab_pos_alibi": ("ALiBi (linear bias)", "ALiBi（线性偏置）"),
    "lab_task": ("Task", "任务"),
    "lab_length": ("Sequence length", "序列长度"),
    "lab_layers": ("Layers", "层数"),
    "lab_mlp": ("MLP after attention", "注意力后接 MLP"),
    "lab_lr": ("Learning rate", "学习率"),
    "lab_batch": ("Batch size", "批大小"),
    "lab_steps": ("Steps", "训练步数"),
    "lab_b": ("Compare with", "对比"),
    "lab_play": ("Play", "播放"),
    "lab_pause": ("Pause", "暂停"),
    "lab_step": ("Step", "单步"),
    "lab_reset": ("Reset", "重置"),
    "lab_title_positions": ("Positions matter", "位置信息的作用"),
    "lab_title_scaling": ("Why divide by √d_k", "为什么除以 √d_k"),
    "lab_title_induction": ("An induction pattern", "归纳模式"),
    "lab_title_heads": ("Several heads", "多个头"),
    "lab_title_linear": ("Linear attention", "线性注意力"),
    "lab_not_started": ("not started: press Play", "尚未开始：请按“播放”"),
    "lab_queued": (
        "waiting: {n} run(s) ahead of it on this server",
        "排队中：本服务器上前面还有 {n} 个训练",
    ),
    "lab_state_running": ("step {step} of {total}, held-out accuracy {acc}", "第 {step}/{total} 步，验证准确率 {acc}"),
    "lab_state_paused": ("paused at step {step} of {total} ({acc})", "暂停于第 {step}/{total} 步（{acc}）"),
    "lab_state_done": ("done: {total} steps, held-out accuracy {acc}", "完成：{total} 步，验证准确率 {acc}"),
    "lab_state_diverged": ("stopped at step {step}: diverged", "在第 {step} 步停止：发散"),
    "lab_state_stopped": ("stopped at step {step} of {total}", "在第 {step}/{total} 步停止"),
    "lab_state_failed": ("failed at step {step}", "在第 {step} 步失败"),
    "lab_state_queued": ("waiting", "排队中"),
    "lab_diverged": (
        "The loss became NaN at step {step}, so the run stopped itself. Lower the learning rate.",
        "损失在第 {step} 步变成 NaN，训练已自动停止。请调低学习率。",
    ),
    "lab_loss": ("Loss", "损失"),
    "lab_train_loss": ("train", "训练"),
    "lab_val_loss": ("held-out", "验证"),
    "lab_acc": ("Accuracy", "准确率"),
    "lab_train_acc": ("train accuracy", "训练准确率"),
    "lab_val_acc": ("held-out accuracy", "验证准确率"),
    "lab_heads_at": (
        "Each head's weights on the probe example at step {step} (gradient norm of W_q, W_k: {grad:.3g})",
        "第 {step} 步时各个头在探针样例上的权重（W_q、W_k 的梯度范数：{grad:.3g}）",
    ),
    "lab_head": ("layer {layer}, head {head}", "第 {layer} 层，第 {head} 个头"),
    "lab_replay": ("Replay: step", "回放：步数"),
    "lab_ideal": ("Ideal pattern ({task})", "理想模式（{task}）"),
    "lab_probe": ("Probe input {x} → target {y}", "探针输入 {x} → 目标 {y}"),
    "lab_run": ("run", "训练"),
    "lab_steps_to_99": ("steps to 99 % held-out accuracy", "达到 99% 验证准确率的步数"),
    "lab_not_reached": ("did not reach it", "未达到"),
    "lab_press_play": ("Press Play (or P) to train.", "按“播放”（或 P 键）开始训练。"),
    "lesson_link": ("Lesson link", "课堂链接"),
    "lesson_help": (
        (
            "A link to this view for a class: the settings you hide are not shown (they keep their values), the ones "
            "you lock are shown and cannot be changed."
        ),
        "生成当前视图的课堂链接：隐藏的设置不显示（保持当前值），锁定的设置可见但不能修改。",
    ),
    "lesson_hide": ("Hide", "隐藏"),
    "lesson_lock": ("Lock", "锁定"),
    "mh_show_four": ("Show 4 heads", "显示 4 个头"),
    "mh_one_head": (
        "With one head there is only one pattern to see: several heads are the point of this page.",
        "只有一个头时只能看到一种模式；这一页要看的正是多个头。",
    ),
    "tour_title": ("A guided tour", "导览"),
    "tour_intro": (
        "Thirteen short lessons, in order: each opens the right page with the right settings and asks one question.",
        "十三个简短的小课，按顺序进行：每一课都会用合适的设置打开对应页面，并提出一个问题。",
    ),
    "tour_lesson": ("Lesson {n} of {total}", "第 {n} 课，共 {total} 课"),
    "tour_back": ("Back: {title}", "上一课：{title}"),
    "tour_next": ("Next: {title}", "下一课：{title}"),
    "tour_qkv": ("Why Q, K and V", "为什么要有 Q、K、V"),
    "tour_qkv_q": (
        (
            "Each token is projected three times. Switch between W_q, W_k and W_v: which one decides what a token "
            "*looks for*, which one what it *offers*, and which one what it *passes on*?"
        ),
        (
            "每个词元被投影三次。在 W_q、W_k、W_v 之间切换：哪一个决定词元*要找什么*，哪一个决定它*能提供什么*，"
            "哪一个决定它*传递什么*？"
        ),
    ),
    "tour_scores": ("Scores: a query against every key", "分数：一个查询对所有键"),
    "tour_scores_q": (
        "Pick a focus token. Before looking at the bars: which key will get its highest score, and why?",
        "选一个关注词元。先别看柱状图：它对哪个键的分数最高？为什么？",
    ),
    "tour_scale": ("Why divide by √d_k", "为什么除以 √d_k"),
    "tour_scale_q": (
        (
            "Here d_k = 512. Compare the largest weight of the focus row with and without the scaling (the blue box): "
            "what does an unscaled softmax do to the weights when d_k is large?"
        ),
        "这里 d_k = 512。比较关注行在缩放与不缩放时的最大权重（蓝色提示框）：d_k 很大时，不缩放的 softmax 会让权重变成什么样？",
    ),
    "tour_softmax": ("The softmax, stage by stage", "分阶段看 softmax"),
    "tour_softmax_q": (
        "Why is the row maximum subtracted before exp? Does it change the weights?",
        "为什么在取 exp 之前先减去每行的最大值？这会改变权重吗？",
    ),
    "tour_mask": ("What the mask does", "掩码的作用"),
    "tour_mask_q": (
        "With a causal mask, which keys can the third token see? What happens to the scores of the others?",
        "使用因果掩码时，第三个词元能看到哪些键？其他键的分数变成了什么？",
    ),
    "tour_heads": ("Why several heads", "为什么要多个头"),
    "tour_heads_q": (
        "Four heads, the same sentence: do they attend the same way? What could one head find that another misses?",
        "四个头，同一个句子：它们的注意方式一样吗？一个头能发现哪些另一个头发现不了的东西？",
    ),
    "tour_positions": ("Why positions are needed", "为什么需要位置信息"),
    "tour_positions_q": (
        "Press Play. A has no positional encoding, B has. Which one can learn to reverse a sequence, and why?",
        "按“播放”。A 没有位置编码，B 有。哪一个能学会反转序列？为什么？",
    ),
    "tour_cross": ("Cross-attention", "交叉注意力"),
    "tour_cross_q": (
        (
            "Queries come from the second sentence, keys and values from the first. Which German word does 'dessert' "
            "attend to?"
        ),
        "查询来自第二个句子，键和值来自第一个句子。“dessert”关注的是哪个德语单词？",
    ),
    "tour_cost": ("The cost of L²", "L² 的代价"),
    "tour_cost_q": (
        "Run the sweep. When the length doubles, how much longer does full attention take? And the sliding window?",
        "运行测速。长度翻倍时，完整注意力的时间变为多少倍？滑动窗口呢？",
    ),
    "tour_sparse": ("A sparse remedy: the sliding window", "稀疏的办法：滑动窗口"),
    "tour_sparse_q": (
        "How many query–key pairs does the window compute, out of L²? What can a token no longer see?",
        "在 L² 个查询–键对中，滑动窗口只计算多少个？一个词元不再能看到什么？",
    ),
    "tour_linear": ("A linear remedy: sum the keys first", "线性的办法：先对键求和"),
    "tour_linear_q": (
        "The state S has the same size whatever the sentence's length. Why does that make the cost linear in L?",
        "不论句子多长，状态 S 的大小都不变。为什么这样代价就随 L 线性增长？",
    ),
    "tour_approx": ("How good are the approximations?", "这些近似有多好？"),
    "tour_approx_q": (
        "Compare each variant's error with uniform attention's (a plain average of the values). Which ones beat it?",
        "把每个变体的误差与均匀注意力（直接平均所有值）的误差比较。哪些变体比它好？",
    ),
    "tour_real": ("A real model's heads", "真实模型的注意力头"),
    "tour_real_q": (
        "Layer 4, head 9 of a trained model. What pattern do you see, and does any head attend mostly to [SEP]?",
        "训练好的模型的第 4 层第 9 个头。你看到了什么模式？有没有哪个头主要关注 [SEP]？",
    ),
    "predict": ("Predict first", "先预测"),
    "predict_ask": (
        "Before you see the weights: which key will '{tok}' attend to most?",
        "在看到权重之前：'{tok}' 会最关注哪个键？",
    ),
    "predict_head": (
        "The question is about head {h} (the first head shown).",
        "问题针对第 {h} 个头（显示的第一个头）。",
    ),
    "present_start": ("Present", "演示模式"),
    "present_exit": ("Leave presenter mode", "退出演示模式"),
    "present_at": ("Step {i} of {n}: {step}", "第 {i} 步，共 {n} 步：{step}"),
    "present_controls": ("Focus token, head and step", "关注的词元、头和步骤"),
    "present_back": ("Back", "上一步"),
    "present_next": ("Next", "下一步"),
    "present_st_tokens": (
        (
            "The sentence is cut into **{n} tokens**. Each becomes a vector of {d} numbers: its embedding plus its "
            "position. Follow **{tok}**: it is the query we watch through every step."
        ),
        (
            "句子被切成 **{n} 个词元**。每个词元变成一个 {d} 维向量：词嵌入加上位置编码。请跟着 **{tok}**："
            "每一步我们都看它这个查询。"
        ),
    ),
    "present_st_qkv": (
        (
            "Three learned matrices turn every token into a **query** (what am I looking for?), a **key** (what do I "
            "offer?) and a **value** (what do I pass on?). Each query and key has d_k = {dk} numbers."
        ),
        (
            "三个可学习的矩阵把每个词元变成**查询**（我在找什么？）、**键**（我能提供什么？）和**值**（我传递什么？）。"
            "每个查询和键有 d_k = {dk} 个数。"
        ),
    ),
    "present_st_scores": (
        (
            "Every query meets every key in a dot product: one score per pair, {L} × {S} in all. Dividing by √d_k "
            "keeps the scores from growing with d_k. **{tok}** scores highest against **{top}**."
        ),
        (
            "每个查询与每个键做点积：每一对一个分数，共 {L} × {S} 个。除以 √d_k 让分数不随 d_k 变大。"
            "**{tok}** 与 **{top}** 的分数最高。"
        ),
    ),
    "present_st_mask": (
        (
            "The mask says which pairs may attend: **{allowed} of {total}**. A masked pair's score becomes −∞, "
            "so after the softmax its weight is exactly 0."
        ),
        (
            "掩码决定哪些词对可以相互关注：**{total} 对中的 {allowed} 对**。被遮住的分数变成 −∞，"
            "softmax 之后它的权重正好是 0。"
        ),
    ),
    "present_st_softmax": (
        (
            "Softmax turns each row of scores into weights that are positive and add up to 1 (the row's maximum "
            "is subtracted first, so exp() never overflows). **{tok}** gives **{best}** the weight **{w}**."
        ),
        (
            "softmax 把每一行分数变成为正、且和为 1 的权重（先减去该行最大值，exp() 就不会溢出）。"
            "**{tok}** 给 **{best}** 的权重是 **{w}**。"
        ),
    ),
    "present_st_output": (
        (
            "Each token's output is the weighted average of the value vectors: its **context vector**. "
            "**{tok}** takes most from **{best}** ({w}). That is attention."
        ),
        (
            "每个词元的输出是值向量的加权平均：它的**上下文向量**。**{tok}** 从 **{best}** 取得最多（{w}）。"
            "这就是注意力。"
        ),
    ),
    "present_variant_step": (
        "**{step}**: this variant's own step, on its efficient path. Follow **{tok}**.",
        "**{step}**：这个变体自己的一步，走它的高效路径。请跟着 **{tok}**。",
    ),
    "predict_pick": ("Your prediction", "你的预测"),
    "predict_reveal": ("Reveal", "揭晓"),
    "predict_right": (
        "Right: '{tok}' attends most to {truth} (weight {w:.3f}).",
        "答对了：'{tok}' 最关注 {truth}（权重 {w:.3f}）。",
    ),
    "predict_wrong": (
        "You chose {mine}; '{tok}' attends most to {truth} (weight {w:.3f}). Look at the scores step to see why.",
        "你选了 {mine}；'{tok}' 最关注的是 {truth}（权重 {w:.3f}）。看看分数那一步，找找原因。",
    ),
    "predict_class": ("The class's predictions ({n} answers)", "全班的预测（{n} 个回答）"),
    "alt_attends": ("'{q}' attends most to '{k}' ({w}).", "“{q}”最关注“{k}”（{w}）。"),
    "alt_range": (
        "Largest value {hi} at {hi_at}; smallest {lo} at {lo_at}.",
        "最大值 {hi} 位于 {hi_at}；最小值 {lo} 位于 {lo_at}。",
    ),
    "alt_bars": ("Highest: '{name}' ({v}).", "最高：“{name}”（{v}）。"),
    "alt_grouped": ("Highest: {series} at '{name}' ({v}).", "最高：{series}，位于“{name}”（{v}）。"),
    "alt_lines": ("Strongest line: '{q}' → '{k}' ({w}).", "最粗的连线：“{q}”→“{k}”（{w}）。"),
    "alt_multiples": ("Most focused: {row}, {col} (largest weight {w}).", "最集中：{row}，{col}（最大权重 {w}）。"),
    "alt_loglog": (
        "At {x}: lowest {low} ({lv}), highest {high} ({hv}).",
        "在 {x}：最低 {low}（{lv}），最高 {high}（{hv}）。",
    ),
    "alt_line": ("At {x}: {values}.", "在 {x}：{values}。"),
    "palette": ("Colours", "配色"),
    "palette_standard": ("standard", "标准"),
    "palette_safe": ("colour-blind safe", "色盲友好"),
    "predict_teacher": ("Lesson {code}: the class's predictions, live", "课堂 {code}：全班的预测（实时）"),
    "predict_answers": ("{n} answers so far for '{tok}'.", "关于 '{tok}'，目前有 {n} 个回答。"),
    "predict_show_truth": ("Show the answer", "显示答案"),
    "predict_truth": ("'{tok}' attends most to {truth}.", "'{tok}' 最关注 {truth}。"),
    "predict_end": ("End the lesson (clear the answers)", "结束课堂（清除回答）"),
    "vs_pattern": ("Pattern", "稀疏模式"),
    "vs_pattern_note": (
        "{pairs} of the {all} query–key pairs are computed ({share:.0f}%); the others are never scored.",
        "{all} 个查询–键对中只计算 {pairs} 个（{share:.0f}%），其余的从不打分。",
    ),
    "vs_band_scores": ("Scores on the pattern", "模式内的分数"),
    "vs_band_scores_note": (
        "Only the {pairs} allowed pairs get a score; blank cells were never computed.",
        "只有允许的 {pairs} 个位置对有分数；空白格子从未计算。",
    ),
    "vs_band_softmax": ("Softmax over each row's pairs", "每行只在允许的位置上做 Softmax"),
    "vs_band_softmax_note": (
        (
            "Each row's softmax runs over its allowed pairs only; their weighted sum of values equals the variant's "
            "output (largest difference {max_diff:.1e})."
        ),
        "每一行的 softmax 只覆盖它允许的位置；这些位置上值的加权和等于该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "vs_random_features": ("Random features ω", "随机特征 ω"),
    "vs_random_features_note": (
        "m = {m} random directions in d = {d} dimensions, orthogonal within blocks of d.",
        "在 d = {d} 维里取 m = {m} 个随机方向，每 d 个一组彼此正交。",
    ),
    "vs_features": ("Feature maps φ(Q), φ(K)", "特征映射 φ(Q)、φ(K)"),
    "vs_features_note": (
        "Every entry is positive, so the weights they make are positive, like a softmax's; m = {m} features per token.",
        "每个元素都为正，所以得到的权重也为正，和 softmax 一样；每个词元 m = {m} 个特征。",
    ),
    "vs_state": ("State S and normaliser z", "状态 S 与归一化项 z"),
    "vs_state_note": (
        (
            "S is {m} × {dv} whatever the length of the sentence (L = {L}): summing over the keys first is what makes the "
            "cost linear in L."
        ),
        "无论句子多长（L = {L}），S 都是 {m} × {dv}：先对键求和，代价才随 L 线性增长。",
    ),
    "vs_prefix_state": ("Running state", "累积状态"),
    "vs_prefix_state_note": (
        (
            "Causal: the state is a running sum, so position i sees the keys up to i only. The whole-sentence state is "
            "{m} × {dv}; below it, the state after the focus token."
        ),
        "因果形式下状态是累加和，位置 i 只看到 i 之前（含 i）的键。整句的状态是 {m} × {dv}；下面是关注词元处的状态。",
    ),
    "vs_prefix_at": ("State after '{tok}'", "“{tok}”处的累积状态"),
    "vs_normalise": ("Read out and normalise", "读出并归一化"),
    "vs_normalise_note": (
        (
            "Each query reads the state (φ(q_i)ᵀS) and divides by φ(q_i)ᵀz; that is the variant's output (largest "
            "difference {max_diff:.1e})."
        ),
        "每个查询读取状态（φ(q_i)ᵀS）再除以 φ(q_i)ᵀz，这就是该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "vs_amounts_to": ("What it amounts to", "等价的 L × L 矩阵"),
    "vs_amounts_to_note": (
        "The L × L matrix this computation amounts to (L = {L}), for display only: the efficient path never builds it.",
        "这个计算等价的 L × L 矩阵（L = {L}），只为展示：高效路径从不构造它。",
    ),
    "vs_error": (
        (
            "On this sentence its weights differ from exact softmax weights by {error:.2f} (relative); uniform weights, "
            "a plain average of the values, differ by {uniform:.2f}."
        ),
        "在这个句子上，它的权重与精确 softmax 权重的相对误差是 {error:.2f}；均匀权重（直接平均所有值）的误差是 {uniform:.2f}。",
    ),
    "vs_no_better": (
        "Here the approximation is no better than uniform attention. More features (m) make it better.",
        "此处这个近似并不比均匀注意力更好。增加特征数 m 会改善它。",
    ),
    "vs_projections": ("Projections E, F", "投影 E、F"),
    "vs_projections_note": (
        "K and V are squeezed along the sequence, from S = {S} rows to k = {k}.",
        "K 和 V 沿序列方向被压缩：从 S = {S} 行到 k = {k} 行。",
    ),
    "vs_low_rank_scores": ("Scores L × k", "L × k 分数"),
    "vs_low_rank_scores_note": (
        "Each query scores k = {k} projected keys instead of the L = {L} keys.",
        "每个查询只对 k = {k} 个投影后的键打分，而不是 L = {L} 个键。",
    ),
    "vs_low_rank_softmax": ("Softmax and sum", "Softmax 与加权求和"),
    "vs_low_rank_softmax_note": (
        "softmax(e) V′ is the variant's output (largest difference {max_diff:.1e}).",
        "softmax(e) V′ 就是该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "tokens_table": ("Tokens and ids (vocabulary = sorted unique words)", "词元与编号（词表 = 排序后的唯一单词）"),
    "token": ("token", "词元"),
    "id": ("id", "编号"),
    "position": ("position", "位置"),
    "embeddings": ("Embeddings x (+ positional encoding)", "嵌入 x（+ 位置编码）"),
    "weights_of": ("Weight matrix {name}", "权重矩阵 {name}"),
    "raw_scores": ("Raw scores Q Kᵀ", "原始分数 Q Kᵀ"),
    "scaled_scores": ("Scaled scores (what enters the softmax)", "缩放后的分数（送入 softmax）"),
    "why_scale": (
        "Why scale? q·k adds up d_k products, so its spread grows like √d_k. Without ÷√d_k the softmax saturates: one weight near 1, the rest near 0, and gradients vanish. Here the largest weight of the focus row is {unscaled:.4f} without scaling and {scaled:.4f} with it.",
        "为什么要缩放？q·k 是 d_k 个乘积之和，其尺度随 √d_k 增长。若不除以 √d_k，softmax 会饱和：一个权重接近 1，其余接近 0，梯度消失。这里关注行的最大权重不缩放时为 {unscaled:.4f}，缩放后为 {scaled:.4f}。",
    ),
    "mask_matrix": ("Mask (1 = may attend)", "掩码（1 = 可关注）"),
    "mask_count": ("{n} of {total} query–key pairs may attend.", "{total} 个查询-键对中有 {n} 个可以关注。"),
    "empty_rows": (
        "{n} query rows have nothing to attend to: their weights are 0 (flagged), never NaN.",
        "有 {n} 个查询行没有可关注的位置：其权重为 0（已标记），不会出现 NaN。",
    ),
    "sm_max": ("Row max", "行最大值"),
    "sm_exp": ("exp(x − max)", "exp(x − max)"),
    "sm_sum": ("Row sum", "行和"),
    "attn_weights": ("Attention weights", "注意力权重"),
    "context": ("Context vectors (weights @ V)", "上下文向量（权重 @ V）"),
    "focus_row": ("Focus '{tok}': its weights over the keys", "关注词元“{tok}”：它对各个键的权重"),
    "focus_scores": ("Focus '{tok}': raw and scaled scores", "关注词元“{tok}”：原始与缩放后的分数"),
    "focus_context": ("Focus '{tok}': context vector", "关注词元“{tok}”：上下文向量"),
    "download_json": ("Download the trace (JSON)", "下载完整计算过程（JSON）"),
    "download_csv": ("Download {name} (CSV)", "下载 {name}（CSV）"),
    "shape": ("shape", "形状"),
    "dropout_note": (
        "Dropout is on: the weights used for the sum are the dropped, rescaled ones.",
        "Dropout 已开启：用于加权求和的是经过随机丢弃并重新缩放的权重。",
    ),
    # multi-head
    "mh_intro": (
        "Each head projects the same tokens with its own weights and attends on its own; the heads' contexts are concatenated{proj}.",
        "每个头用自己的权重投影相同的词元并独立计算注意力；各头的上下文向量被拼接{proj}。",
    ),
    "mh_proj": (" and projected back to d_model by W_o", "，再由 W_o 投影回 d_model"),
    "concat": ("Concatenated heads", "拼接后的多头输出"),
    "output": ("Layer output", "层输出"),
    "params": ("Parameters", "参数量"),
    "params_formula": (
        "Overview's rule 4·d_model² = {f:,}; this layer has {n:,} ({b:,} of them biases).",
        "概述中的公式 4·d_model² = {f:,}；本层共有 {n:,} 个参数（其中偏置 {b:,} 个）。",
    ),
    "params_tutorial": (
        "The tutorial layout has no W_o; its heads have their own d_q, d_k, d_v, so 4·d_model² = {f:,} does not apply: this layer has {n:,}.",
        "教程布局没有 W_o，每个头有自己的 d_q、d_k、d_v，因此 4·d_model² = {f:,} 不适用：本层共有 {n:,} 个参数。",
    ),
    "heads_to_show": ("Heads to show", "显示的头"),
    # cross
    "cross_intro": (
        "Queries come from the second sentence, keys and values from the first: an L × S matrix (L = {L}, S = {S}).",
        "查询来自第二个句子，键和值来自第一个句子：L × S 矩阵（L = {L}，S = {S}）。",
    ),
    "line_view": ("Who attends to whom (line width = weight)", "谁关注谁（线宽 = 权重）"),
    "min_weight": ("Hide lines below", "隐藏权重低于此值的连线"),
    "queries": ("queries", "查询"),
    "keys": ("keys", "键"),
    # tutorial
    "tut_intro": (
        "The source tutorial, “attention from theory to code”, reproduced step by step by this app's engine. Every number it prints is recomputed here.",
        "原教程《注意力机制从理论到代码实现》，由本应用的引擎逐步复现。教程中打印的每个数字都在这里重新计算。",
    ),
    "tut_printed": ("tutorial prints", "教程输出"),
    "tut_computed": ("computed here", "此处计算"),
    "tut_match": ("match", "一致"),
    "tut_s1": ("3.1 Input: vocabulary and ids", "3.1 输入：词表与编号"),
    "tut_s2": ("3.2 Embedding (seed 123, nn.Embedding(6, 16))", "3.2 词嵌入（种子 123，nn.Embedding(6, 16)）"),
    "tut_s3": (
        "3.3 Weight matrices (seed 123 again; d_q = d_k = 24, d_v = 28)",
        "3.3 权重矩阵（再次设置种子 123；d_q = d_k = 24，d_v = 28）",
    ),
    "tut_s4": ("3.4–3.5 The query 'is': scores and weights", "3.4–3.5 查询 “is”：分数与权重"),
    "tut_s5": ("3.6 Context vector", "3.6 上下文向量"),
    "tut_s6": ("4 Multi-head attention (3 heads)", "4 多头注意力（3 个头）"),
    "tut_s7": (
        "5 Cross-attention (a second sequence of 8 random vectors)",
        "5 交叉注意力（第二个序列为 8 个随机向量）",
    ),
    "tut_seed_note": (
        "Note: the printed numbers come out only when the seed is set again right before the three weight matrices are drawn; the tutorial shows the seed once.",
        "注意：只有在抽取三个权重矩阵之前再次设置随机种子，才能得到教程中打印的数字；原文只显示了一次设置种子。",
    ),
    "tut_dessert": ("'is' attends most to 'dessert' ({w:.4f}).", "“is” 对 “dessert” 的注意力权重最高（{w:.4f}）。"),
    "tut_open": ("Open these settings in Step by step", "在“逐步计算”页打开这些设置"),
    # variants
    "var_intro": (
        "Efficient kernels beside full attention on the current sentence and settings (single head, scaled dot).",
        "在当前句子和设置下，将高效注意力与完整注意力并排比较（单头、缩放点积）。",
    ),
    "var_pick": ("Kernels to compare (two or more)", "要比较的注意力（至少两个）"),
    "var_need_two": ("Pick at least two kernels to compare.", "请至少选择两个进行比较。"),
    "features": ("Performer features m", "Performer 随机特征数 m"),
    "proj_k": ("Linformer k", "Linformer 投影长度 k"),
    "max_abs": ("max |Δ output|", "最大 |Δ 输出|"),
    "kl": ("mean KL of weight rows", "权重行平均 KL"),
    "cos": ("cosine of outputs", "输出余弦相似度"),
    "cost_time": ("time", "时间"),
    "cost_memory": ("memory", "内存"),
    "paper": ("paper", "论文"),
    "how": ("How it is computed", "计算方法"),
    "curve": ("Error against {p}", "误差随 {p} 的变化"),
    "pattern": ("Pattern", "稀疏模式"),
    "window_too_big": (
        "The window w = {w} covers the whole sentence ({L} tokens): the sliding window equals full attention. Make w smaller than {L} to see sparsity.",
        "窗口 w = {w} 覆盖了整个句子（{L} 个词元）：滑动窗口等同于完整注意力。将 w 设为小于 {L} 的值才能看到稀疏性。",
    ),
    # real model
    "rm_intro": (
        "A trained encoder reads your sentence. See what each of its heads attends to, then take one head apart with this app's step-by-step engine and check every number against the model's own.",
        "一个训练好的编码器读取你的句子。看看它的每个头关注什么，再用本应用的逐步计算引擎拆开其中一个头，并与模型自己的输出逐一核对。",
    ),
    "rm_settings": ("Model and padding", "模型与填充"),
    "rm_model": (
        "Model (the server offers these; whoever runs it can add local ones with ATTN_EXPLORER_MODELS)",
        "模型（由服务器提供；运行服务器的人可以用 ATTN_EXPLORER_MODELS 添加本地模型）",
    ),
    "rm_pad": (
        "Pad to this many pieces, as in a batch with a longer sentence (0 = no padding)",
        "填充到这么多个词片，如同与更长的句子组成批次（0 = 不填充）",
    ),
    "rm_loading": (
        "The model is loading (once per server, in the background). This page shows it as soon as it is ready.",
        "模型正在后台加载（每个服务器只加载一次）。加载完成后本页会自动显示。",
    ),
    "rm_unavailable": ("The Real model page cannot run: {msg}", "“真实模型”页面无法运行：{msg}"),
    "rm_install": (
        "Install the model and the library that runs it (no download happens at run time afterwards):",
        "安装模型及运行它的库（之后运行时不再下载任何内容）：",
    ),
    "rm_model_caption": (
        "{name}: {layers} layers × {heads} heads, d_model = {d}, d_head = {d} / {heads} = {dh}, {n:,} parameters.",
        "{name}：{layers} 层 × {heads} 个头，d_model = {d}，d_head = {d} / {heads} = {dh}，共 {n:,} 个参数。",
    ),
    "rm_pieces": (
        "The model's own tokens (WordPiece: ## marks a piece that continues a word)",
        "模型自己的词元（WordPiece：## 表示接续前一个词片）",
    ),
    "rm_truncated": (
        "Your sentence needs {n} pieces; the model has {max} positions, so only the first {max} are used.",
        "你的句子需要 {n} 个词片；模型只有 {max} 个位置，因此只使用前 {max} 个。",
    ),
    "rm_unk": (
        "{unk} of {n} pieces are [UNK]: the bundled model learned from English text and knows few Chinese characters, so it cannot tell these apart. Try an English sentence, or point the page at a multilingual BERT directory.",
        "{n} 个词片中有 {unk} 个是 [UNK]：内置模型用英文文本训练，认识的汉字很少，无法区分这些字。请尝试英文句子，或改用多语言 BERT 模型目录。",
    ),
    "rm_overview": ("Every layer × head", "所有层 × 头"),
    "rm_overview_note": (
        "Row = layer, column = head; each panel is one head's query × key weights. Hover for the pair and the exact weight; pick a head below to take it apart.",
        "行 = 层，列 = 头；每个小图是一个头的查询 × 键权重。悬停可查看词对与精确权重；在下方选择一个头来拆开它。",
    ),
    "rm_pooled": (
        "{n} pieces: each panel shows {m} × {m} blocks, the average weight of the pieces they cover (hover names them). The head view below shows every piece.",
        "共 {n} 个词片：每个小图显示 {m} × {m} 个块，即所覆盖词片的平均权重（悬停可看到范围）。下方的单头视图显示全部词片。",
    ),
    "rm_layer": ("Layer", "层"),
    "rm_head_view": ("Layer {l}, head {h}", "第 {l} 层第 {h} 个头"),
    "rm_model_weights": ("The model's attention probabilities", "模型自己的注意力概率"),
    "rm_apart": ("Take the head apart", "拆开这个头"),
    "rm_apart_intro": (
        "Head {h}'s W_q, W_k, W_v and biases, taken from the model, go through attn_core's steps on x, the hidden states that enter layer {l}.",
        "从模型中取出第 {h} 个头的 W_q、W_k、W_v 及偏置，用 attn_core 的计算步骤作用于 x（进入第 {l} 层的隐藏状态）。",
    ),
    "rm_st_qkv": ("1 Projections (with bias)", "1 投影（含偏置）"),
    "rm_st_scores": ("2 Scores & scaling", "2 分数与缩放"),
    "rm_st_mask": ("3 Padding mask", "3 填充掩码"),
    "rm_st_softmax": ("4 Softmax in stages", "4 分阶段 Softmax"),
    "rm_st_output": ("5 Weights & context", "5 权重与上下文"),
    "rm_x": ("x: hidden states entering layer {l}", "x：进入第 {l} 层的隐藏状态"),
    "rm_no_padding": (
        "No padding: every key is visible. Set the padding above to see the mask hide [PAD] keys.",
        "没有填充：所有键都可见。在上方设置填充，即可看到掩码遮住 [PAD] 键。",
    ),
    "rm_diff": ("max |attn_core − model|", "最大 |attn_core − 模型|"),
    "rm_diff_ok": (
        "attn_core's recomputation matches the model's own attention probabilities: the largest difference is {d:.2g}.",
        "attn_core 的重新计算与模型自己的注意力概率一致：最大差值为 {d:.2g}。",
    ),
    "rm_diff_bad": (
        "attn_core's recomputation differs from the model by {d:.2g}: this model computes attention in a way this page does not reproduce.",
        "attn_core 的重新计算与模型相差 {d:.2g}：该模型的注意力计算方式本页面无法复现。",
    ),
    "rm_random_intro": (
        "Left: who attends to whom (line width = weight). Right: the same head with untrained weights of the same shapes (nn.Linear's U(±1/√{d})), drawn with the sidebar's seed {seed}, on the same input x. Training is what makes a head focus.",
        "左：谁关注谁（线宽 = 权重）。右：同一个头换成形状相同的未训练权重（nn.Linear 的 U(±1/√{d})），使用侧边栏的随机种子 {seed}，作用于同一个输入 x。正是训练让注意力头学会聚焦。",
    ),
    "rm_untrained": ("Random (untrained)", "随机（未训练）"),
    "rm_entropy": ("mean row entropy (uniform = {u:.2f} nats)", "行平均熵（均匀分布 = {u:.2f} 奈特）"),
    "rm_download": ("Download this head's trace (JSON)", "下载这个头的计算过程（JSON）"),
    # complexity
    "cx_intro": (
        "Time and memory of full, sparse and linear attention on this machine. Each row is measured honestly: warm-up first, the median of many runs, memory from the device's own counters.",
        "在本机上测量完整、稀疏与线性注意力的时间和内存。每一行都如实测量：先预热，取多次运行的中位数，内存来自设备自身的计数。",
    ),
    "cx_device": ("Device", "设备"),
    "cx_kernels": ("Kernels", "注意力实现"),
    "cx_lengths": ("Sequence lengths", "序列长度"),
    "cx_batch": ("Batch", "批大小"),
    "cx_heads": ("Heads", "头数"),
    "cx_dhead": ("d_head", "d_head"),
    "cx_dtype": ("dtype", "数据类型"),
    "cx_causal": ("Causal", "因果"),
    "cx_window": ("Window", "窗口"),
    "cx_run": ("Run the sweep", "运行测量"),
    "cx_stop": ("Stop", "停止"),
    "cx_running": ("Measuring {kernel} at L = {L} ({i}/{n})", "正在测量 {kernel}，L = {L}（{i}/{n}）"),
    "cx_queued": (
        (
            "Another sweep is running on this server; {n} sweep(s) run before yours, which starts when they end "
            "(timings of two sweeps at once would mean nothing)."
        ),
        "本服务器上正在运行另一次测量；你之前还有 {n} 次测量，它们结束后你的测量才开始（同时运行两次测量，计时将毫无意义）。",
    ),
    "cx_starting": ("Starting the sweep in its own process…", "正在独立进程中启动测量……"),
    "cx_failed": ("The sweep failed: {msg}", "测量失败：{msg}"),
    "cx_measured": (
        "Measured in {s:.0f} s in a separate process at low priority; other sessions on this server meanwhile: {n}.",
        "在独立的低优先级进程中测量，用时 {s:.0f} 秒；期间本服务器上的其他会话数：{n}。",
    ),
    "cx_under_load": (
        (
            "{n} other sessions were using this server while it was measured: these timings were taken under "
            "load and are not comparable with a quiet machine's. Run it again when the room is idle for "
            "clean figures."
        ),
        (
            "测量期间本服务器上还有 {n} 个其他会话：这些计时是在负载下测得的，不能与空闲机器上的结果相比。"
            "如需干净的数据，请在无人使用时重新运行。"
        ),
    ),
    "cx_from": ("faster than {base} from L =", "从 L = … 起快于 {base}"),
    "cx_stopped": ("Stopped. The rows measured so far are shown.", "已停止。下面显示的是已测得的结果。"),
    "cx_time": ("Time (ms) against L", "时间（毫秒）随 L 的变化"),
    "cx_mem": ("Peak memory (MiB) against L", "峰值内存（MiB）随 L 的变化"),
    "cx_theory": ("dotted: theoretical FLOPs, scaled to the first point", "虚线：理论 FLOPs，按第一个点缩放"),
    "cx_slopes": (
        "Fitted slopes (log time / log L): ≈2 means O(L²), ≈1 means O(L)",
        "拟合斜率（log 时间 / log L）：≈2 表示 O(L²)，≈1 表示 O(L)",
    ),
    "cx_cross": (
        "Crossovers: from which L each kernel beats full attention (fused SDPA) here",
        "交叉点：从哪个 L 开始各实现快于完整注意力（融合 SDPA）",
    ),
    "cx_never": ("not within the measured lengths", "在测量范围内未出现"),
    "cx_gflops": (
        "Achieved GFLOP/s against this device's matmul ({peak:.0f} GFLOP/s measured)",
        "实际 GFLOP/s 与本设备矩阵乘法吞吐（实测 {peak:.0f} GFLOP/s）的对比",
    ),
    "cx_rule": (
        "The overview's rule of thumb: < 512 tokens full attention is fine; 512–2048 local/sparse; > 2048 linear-class. Measured here: {verdict}",
        "概述中的经验法则：少于 512 个词元用完整注意力即可；512–2048 用局部/稀疏注意力；超过 2048 用线性类注意力。本机实测：{verdict}",
    ),
    "cx_params": (
        "A multi-head layer with d_model = {d} has 4·d_model² = {p:,} weights, whatever L is; its attention matrix has H·L² entries.",
        "d_model = {d} 的多头注意力层有 4·d_model² = {p:,} 个权重，与 L 无关；其注意力矩阵有 H·L² 个元素。",
    ),
    "cx_compile": (
        (
            "compile_s: the seconds a compiled kernel (FlexAttention) spent compiling at its first call at that length; "
            "the timings are of the calls after it."
        ),
        "compile_s：编译型实现（FlexAttention）在该长度下第一次调用时的编译秒数；计时取自之后的调用。",
    ),
    "cx_csv": ("Download the table (CSV)", "下载表格（CSV）"),
    "cx_none": ("Choose kernels and lengths, then run the sweep.", "选择实现与长度，然后运行测量。"),
    "cx_bad": ("Cannot run: {msg}", "无法运行：{msg}"),
}


# The engine's errors (attn_core.errors.MESSAGES, English) in Chinese, keyed by their code and
# formatted with the same params: (what is wrong, how to fix it).
ERRORS_ZH: dict[str, tuple[str, str]] = {
    "unknown_choice": ("未知的 {field}：'{value}'。", "请从以下选项中选择：{options}。"),
    "lab_lr": ("学习率 {value} 无法训练这个模型。", "请选择 0.00001 到 1 之间的学习率。"),
    "lab_alibi_kernel": (
        "ALiBi 是加在 softmax 分数上的偏置，而变体 {kernel} 没有可加偏置的 softmax 分数。",
        "请在 ALiBi 下使用完整注意力或滑动窗口，或换一种位置编码。",
    ),
    "lab_causal_kernel": (
        "任务 {task} 预测下一个词元，查询不能看到后面的键；而 {kernel} 会看所有键。",
        "请选择完整注意力、滑动窗口或因果线性注意力。",
    ),
    "lab_kernel": ("实验室可训练的变体是 {options}；{kernel} 不在其中。", "请在侧边栏的“注意力变体”中选择其中之一。"),
    "lab_rope_even": ("RoPE 成对旋转维度，但 d_k = {d_k} 是奇数。", "请把 d_k 设为偶数。"),
    "whole_number": ("{field} 必须是整数。", "请在 {low} 到 {high} 之间选择 {field}。"),
    "out_of_range": ("{field} = {value} 超出范围 {low}..{high}。", "请在 {low} 到 {high} 之间选择 {field}。"),
    "at_least_one": ("{field} = {value}，至少应为 1。", "请把 {field} 设为 1 或更大。"),
    "not_negative": ("{field} = {value} 不能为负数。", "请把 {field} 设为 0 或更大。"),
    "temperature": ("温度 {value} 无法使用。", "请在 0.01 到 100 之间选择温度。"),
    "dropout": ("Dropout {value} 不是小于 1 的概率。", "请在 [0, 1) 中选择 dropout。"),
    "heads_divide": (
        "标准布局把 d_model = {d_model} 平均分给 {heads} 个头，但无法整除。",
        "请选择能整除 {d_model} 的头数，或选择 {heads} 的倍数作为 d_model。",
    ),
    "dot_sizes": (
        "点积打分要求查询和键的维度相同，但 d_q = {d_q}，d_k = {d_k}。",
        "请把 d_q 设为与 d_k 相等，或改用允许不同维度的加性打分。",
    ),
    "residual_sizes": (
        "残差把输入（d_model = {d_model}）与拼接后的各头（{heads} × d_v = {width}）相加，但两者大小不同。",
        "请使用标准布局（它会用 W_o 投影回 d_model），或使 头数 × d_v 等于 d_model。",
    ),
    "too_much_memory": (
        "这些设置大约需要 {need} MiB（{L} × {S} 个词元、{heads} 个头），超过了单个视图在此可用的 {limit} MiB。",
        "请减少头数、减小 d_model/d_q/d_k/d_v，或缩短句子。",
    ),
    "too_much_memory_additive": (
        "这些设置大约需要 {need} MiB（{L} × {S} 个词元、{heads} 个头），超过了单个视图在此可用的 {limit} MiB。",
        "请改用缩放点积打分（加性打分需要 H·L·S·d_k 个数），或减少头数、缩短句子。",
    ),
    "empty_text": ("文本中没有词：它是空的或只有标点。", "请至少输入一个词，例如“生命短暂，先吃甜点”。"),
    "too_many_tokens": ("文本有 {n} 个词元，实时计算的上限是 {limit}。", "请缩短到 {limit} 个词元以内。"),
    "pattern_cross": ("{kernel} 是单个序列上的模式（自注意力）。", "交叉注意力请使用完整注意力。"),
    "dot_kernel": ("{kernel} 只适用于点积打分。", "请使用缩放点积打分，或完整注意力。"),
    "linformer_causal": ("Linformer 把所有位置混合成 k 行，因此不能是因果的。", "请关闭因果，或换用其他实现。"),
    "flex_unavailable": ("FlexAttention 无法在此运行：{reason}。", "请改用本应用自带的稀疏实现。"),
    "linformer_k": ("Linformer 的 k = {k} 必须在 1 到 {n} 个键词元之间。", "请把 k 设在 1 到 {n} 之间。"),
    "no_transformers": ("“真实模型”页面需要 transformers 库，但它没有安装。", "安装命令：{install}"),
    "no_bundled_model": ("内置模型（{model}）没有安装。", "安装命令：{install}（或提供本地模型目录）。"),
    "no_model_dir": ("'{spec}' 处没有模型目录。", "请提供包含 config.json、权重和分词器文件的目录，或使用内置模型。"),
    "hub_unreachable": (
        "'{spec}' 不是本地目录，而且从这里无法访问模型仓库。",
        "请在能联网的机器上下载模型并提供其目录，或使用内置模型。",
    ),
    "model_load_failed": (
        "无法加载模型 '{spec}'：{reason}",
        "请提供包含 config.json、权重和分词器文件的本地目录，或使用内置模型。",
    ),
    "model_weights_mismatch": (
        "'{spec}' 中的权重与其配置不符（缺少 {n} 个注意力或嵌入权重，例如 {example}）。",
        "请提供权重与 config.json 相符的目录，或使用内置模型。",
    ),
    "model_not_bert": (
        "'{spec}' 是 {kind}，不是 BERT 类编码器。",
        "请使用 BERT、RoBERTa、ELECTRA 或 MiniLM 编码器目录，或内置模型。",
    ),
    "model_relative_positions": (
        "'{spec}' 在注意力内部使用 {kind} 位置分数，本页无法重新计算。",
        "请使用绝对位置编码的模型。",
    ),
    "empty_sentence": ("句子是空的。", "请在侧边栏输入一个句子。"),
    "no_layer": ("第 {layer} 层不存在：模型共有 {layers} 层。", "请选择 0 到 {last}。"),
    "no_head": ("第 {head} 个头不存在：每层有 {heads} 个头。", "请选择 0 到 {last}。"),
    "nothing_to_run": ("没有可运行的内容。", "请至少选择一个实现和一个长度。"),
    "lengths_positive": ("序列长度必须为正数。", "请使用 256、512、1024 这样的长度。"),
    "lengths_too_long": ("L = {L} 超出了本基准的测量范围。", "请使用不超过 1048576 的长度。"),
    "device_unavailable": ("设备 '{device}' 在此不可用。", "请使用：{options}。"),
    "fp16_cpu": ("CPU 上的 fp16 注意力很慢，也不是 GPU 路径所用的精度。", "CPU 上请使用 fp32 或 bf16。"),
    "min_run_time": (
        "--min-run-time {value} 不是以秒为单位的时间。",
        "请给出 0.01 到 60 秒之间的时间，例如 --min-run-time 0.3。",
    ),
    "budget": ("内存预算不是 0 MiB 或以上的大小。", "请以 MiB 为单位给出预算，例如 --budget-mib 2048。"),
    "csv_is_dir": ("--csv {path} 是一个目录。", "请给出文件名，例如 --csv out.csv。"),
    "csv_no_folder": ("--csv {path} 所在的目录不存在。", "请先创建该目录，或写到别处。"),
    "csv_unwritable": ("无法写入 --csv {path} 所在的目录。", "请写到你有权限写入的位置。"),
    "no_sentence": ("没有给出句子。", "请用引号给出一个句子，或使用 --preset tutorial。"),
    "max_mib": ("--max-mib {value} 不是正的大小。", "请以 MiB 为单位给出大小，例如 --max-mib 1024。"),
    "not_utf8": ("{field} 不是有效的 UTF-8 文本。", "请以 UTF-8 传入（检查终端或文件的编码）。"),
}


def _merge_features() -> None:
    from explorer.catalogue import merged

    merged(STRINGS, ERRORS_ZH)


_merge_features()


def error_text(err) -> tuple[str, str]:
    """(what is wrong, how to fix it) of an engine error, in the UI's language."""
    zh = ERRORS_ZH.get(getattr(err, "code", ""))
    if lang() == "zh" and zh:
        return zh[0].format(**err.params), zh[1].format(**err.params)
    return err.message, err.fix


_run = threading.local()  # each script run has its own thread


def begin_run() -> str:
    """Read the language once for this script run (app.py calls it first): ``t()`` is called
    a hundred times a run, and each read of session state takes a lock."""
    _run.lang = None
    _run.lang = lang()
    return _run.lang


def lang() -> str:
    """The language: the switch's value once drawn, else the URL's ?lang=, else English."""
    cached = getattr(_run, "lang", None)
    if cached:
        return cached
    value = st.session_state.get("lang") or st.query_params.get("lang", "en")
    return value if isinstance(value, str) and value in LANGS else "en"  # the session's value is the browser's


def t(key: str, *, language: str | None = None, **fmt) -> str:
    en, zh = STRINGS[key]
    text = zh if (language or lang()) == "zh" else en
    return text.format(**fmt) if fmt else text


def kernel_label(name: str) -> str:
    """A variant's name in the UI's language (its spec's own label when the catalogue has none)."""
    from attn_core.kernels import KERNELS

    key = f"kernel_{name}"
    return t(key) if key in STRINGS else KERNELS[name].label


def step_label(steps):
    """A ``format_func`` numbering the steps in order ("3 Pattern"), whatever their catalogue labels start with."""
    language = lang()
    order = {step: i + 1 for i, step in enumerate(steps)}

    def fmt(step) -> str:
        text = t(step, language=language)
        text = text.split(" ", 1)[1] if text[:1].isdigit() else text
        return f"{order.get(step, '')} {text}"

    return fmt


def label(prefix: str = "opt_"):
    """A ``format_func`` that shows an option value through the catalogue, in the language of
    the run that drew the widget (a widget's labels must not change after it is drawn)."""
    language = lang()

    def fmt(value) -> str:
        key = f"{prefix}{value}"
        return t(key, language=language) if key in STRINGS else str(value)

    return fmt
