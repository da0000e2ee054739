# A stand-in for prom/prometheus on a host that cannot pull from an image
# registry: Debian's prometheus package on a Debian bookworm base (by default
# node:20-bookworm-slim, which build-node-base.sh can stand in for). It runs
# like the official image (entrypoint prometheus, data in /prometheus, not
# root), so deploy/docker-compose.yml's command and volumes work unchanged.
#   docker build --network host -f deploy/offline/prometheus.Dockerfile -t agency-cache/prometheus:debian deploy/offline
ARG BASE=node:20-bookworm-slim
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /prometheus \
 && chown prometheus:prometheus /prometheus
USER prometheus
WORKDIR /prometheus
VOLUME ["/prometheus"]
EXPOSE 9090
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
