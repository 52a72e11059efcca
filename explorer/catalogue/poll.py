"""The class poll's strings: the notice when its shared store is unreachable, the teacher's CSV."""

UNAVAILABLE = (
    "The class poll is unavailable: answers are not being counted. "
    "Your own prediction still works; counting resumes when the poll is back."
)

STRINGS = {
    "poll_unavailable": (
        UNAVAILABLE,
        "课堂投票暂时不可用：回答没有被统计。你自己的预测照常进行；投票恢复后会继续统计。",
    ),
    "poll_unavailable_teacher": (
        "The class poll is unavailable: answers are not being counted. The count resumes when the poll is back.",
        "课堂投票暂时不可用：回答没有被统计。投票恢复后会继续统计。",
    ),
    "poll_download": ("Download the lesson's answers (CSV)", "下载本课堂的回答（CSV）"),
    "predict_teacher_hidden": (
        "The weights stay hidden on this screen until you switch on the answer.",
        "在你打开“显示答案”之前，本屏幕不显示权重。",
    ),
}
