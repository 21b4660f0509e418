# Sourced by the Containerfile's build steps that download (npm, pip): when the build is given a
# CA bundle (`podman build --secret id=ca-bundle,src=FILE`, as scripts/build-image does with the
# host's), npm, pip and Python's urllib trust it, for networks that inspect TLS. It is never
# copied into the image.
if [ -s /run/secrets/ca-bundle ]; then
    export NODE_EXTRA_CA_CERTS=/run/secrets/ca-bundle PIP_CERT=/run/secrets/ca-bundle \
        SSL_CERT_FILE=/run/secrets/ca-bundle
fi
