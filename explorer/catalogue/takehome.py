"""Take it home: the notebook and script downloads (explorer/takehome.py)."""

STRINGS = {
    "takehome_notebook": ("Download as notebook (.ipynb)", "下载为笔记本（.ipynb）"),
    "takehome_script": ("Download as Python script (.py)", "下载为 Python 脚本（.py）"),
    "takehome_help": (
        (
            "Every number of this view, recomputed step by step with plain PyTorch (no need for this app), each step "
            "with its formula; the last cell compares them with the app's values."
        ),
        "用纯 PyTorch（不需要本应用）逐步重新计算此视图的每个数字，每一步附有公式；最后一个单元格把它们与应用的数值比较。",
    ),
    "takehome_refused": ("No notebook for this view: {msg}", "此视图无法导出笔记本：{msg}"),
}

ERRORS_ZH = {
    "notebook_too_big": (
        "此视图的笔记本需要携带应用的 {n} 个数（{mib} MiB），超过了单个笔记本允许的 {limit} MiB。",
        "请缩短句子、减少头数，或减小 d_model/d_q/d_k/d_v。",
    ),
    "notebook_variant": (
        "笔记本导出还不认识注意力变体 {kernel} 的计算步骤。",
        "请选择其他注意力变体，或下载 JSON 格式的计算过程。",
    ),
}
