# Palaver in a container: a static binary (cgo off; the SQLite driver is
# pure Go) on a distroless base, run as a non-root user, with the database
# on the /data volume.
#
#   docker build -t palaver \
#     --build-arg VERSION=v1.2.0 --build-arg REVISION=$(git rev-parse HEAD) .
#   docker run -d --name palaver -p 127.0.0.1:8420:8420 -v palaver-data:/data \
#     -e PALAVER_BASE_URL=https://palaver.example.com palaver
#
# docs/deploy.md#docker says more.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The source has no .git here, so the version and commit are stamped.
ARG VERSION=
ARG REVISION=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/palaverhq/palaver/internal/build.version=${VERSION} -X github.com/palaverhq/palaver/internal/build.revision=${REVISION}" \
      -o /out/palaver ./cmd/palaver \
 && mkdir /out/data

# static: CA certificates, time zones and /etc/passwd, no shell; nonroot
# is uid and gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/palaver /palaver
# A new volume takes the owner of the image's /data: the non-root user.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
ENV PALAVER_ADDR=0.0.0.0:8420 \
    PALAVER_DATABASE=/data/palaver.db
VOLUME /data
EXPOSE 8420
# palaver health asks this server's /readyz; the image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/palaver", "health"]
ENTRYPOINT ["/palaver"]
CMD ["serve"]
