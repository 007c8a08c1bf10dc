# devtools-mcp serving MCP over HTTP (`serve`) with Debian's Chromium, as a non-root user.
#
# The build context is a folder holding the built server, `devtools-mcp`, which carries its
# built-in tools. `deploy/build-image` makes that folder from a release build and runs the build:
#
#   deploy/build-image                       # podman, or docker when podman is absent
#   podman run -p 8808:8808 -v ./tenants.toml:/etc/devtools-mcp/tenants.toml:ro devtools-mcp
#
# The binary must be built for the image's Debian release (glibc); build it on bookworm.
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${BASE}

# tini reaps Chromium's processes (PID 1 must); fonts so pages render text.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        chromium ca-certificates fonts-liberation fonts-noto-color-emoji tini \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 devtools \
    && useradd --system --uid 10001 --gid devtools --home-dir /var/lib/devtools-mcp \
        --create-home --shell /usr/sbin/nologin devtools \
    && mkdir -p /etc/devtools-mcp

COPY --chown=root:root --chmod=0755 devtools-mcp /opt/devtools-mcp/devtools-mcp

USER 10001:10001
WORKDIR /var/lib/devtools-mcp
# DEVTOOLS_MCP_HEALTH_PORT: the port the health check asks; set it with `--env` when the
# server listens elsewhere (`--http=...:PORT`).
ENV HOME=/var/lib/devtools-mcp \
    RUST_LOG=info,chromiumoxide=warn \
    DEVTOOLS_MCP_HEALTH_PORT=8808
EXPOSE 8808

# /healthz answers 200 while the accept loop runs; bash's /dev/tcp needs no extra package.
# (OCI images drop HEALTHCHECK: build with `--format docker`; Kubernetes uses its own probes.)
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${DEVTOOLS_MCP_HEALTH_PORT:-8808} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]

ENTRYPOINT ["/usr/bin/tini", "--", "/opt/devtools-mcp/devtools-mcp", "serve"]
# Listen on every interface of the container; mount the tenants file (docs/multi-tenant.md).
# Without user namespaces in the container Chromium's own sandbox cannot start: the container
# is its sandbox then, and --chromeArg=--no-sandbox is added (see deploy/kubernetes).
CMD ["--http=0.0.0.0:8808", "--tenants=/etc/devtools-mcp/tenants.toml", "--executablePath=/usr/bin/chromium"]
