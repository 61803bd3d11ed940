# The playground as one container: CPU-only PyTorch, the pinned requirements, a non-root user.
#
#   docker build -t attention-playground .
#   docker run -p 8501:8501 attention-playground          # then open http://localhost:8501
#
# Settings by environment: ATTN_PLAYGROUND_* (the app's own, see docs/DEPLOY.md and docs/SCALE.md;
# e.g. ATTN_PLAYGROUND_CHECKPOINTS=name=/models/dir with the directory mounted read-only) and
# STREAMLIT_* (any Streamlit option, e.g. STREAMLIT_SERVER_BASE_URL_PATH). The app's
# .streamlit/config.toml is baked in at /app/.streamlit/config.toml.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# torch first, the CPU-only build from PyTorch's CPU index (192 MB instead of > 1.5 GB of CUDA
# packages; see docs/DEPLOY.md). pip (not uv) looks at every index and the local label "+cpu"
# exists only on PyTorch's index, so this cannot pick a CUDA build. Then requirements.txt from
# PyPI: its "torch==2.13.0" is already satisfied by 2.13.0+cpu, every other package is pinned.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
COPY requirements.txt ./
RUN pip install --extra-index-url "${TORCH_INDEX_URL}" "torch==2.13.0+cpu" \
    && pip install -r requirements.txt \
    && python -c "import torch; assert not torch.version.cuda, torch.version.cuda"

# The app (owned by root, read-only for the user that runs it).
COPY .streamlit/ ./.streamlit/
COPY playground.py ./
COPY mha/ ./mha/
COPY components/ ./components/
COPY pages/ ./pages/

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin playground
USER 10001:10001

# One PyTorch thread per operation: a room runs many sessions at once, and two threads per small
# operation spent twice the CPU per page run (OpenMP workers spin while they wait) and stalled
# when the cores were busy (docs/SCALE.md has the numbers).
ENV ATTN_PLAYGROUND_THREADS=1
EXPOSE 8501

HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

CMD ["python", "-m", "streamlit", "run", "playground.py", "--server.port=8501", "--server.address=0.0.0.0"]
