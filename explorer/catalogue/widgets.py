"""Strings for browser values that do not fit, a hidden setting's error, and predict-then-reveal's hold."""

STRINGS = {
    "widget_fixed": (
        (
            "“{name}” received a value it cannot use (its choices or limits may have changed as you clicked): "
            "it was set back. Change it again if you meant another value."
        ),
        "“{name}”收到了一个无法使用的值（您点击时它的选项或范围可能已改变），已恢复原值。如需其他值，请重新设置。",
    ),
    "hidden_error": (
        (
            "This setting ({name}) is hidden by the lesson link, so it cannot be changed here: "
            "ask for a link with a usable value, or open the link without “hide”."
        ),
        "此设置（{name}）被课程链接隐藏，无法在此修改：请索取一个值可用的链接，或去掉链接中的“hide”后再打开。",
    ),
    "predict_hold": (
        "The narration of this step waits for your prediction.",
        "此步骤的讲解将在您作出预测后显示。",
    ),
}
