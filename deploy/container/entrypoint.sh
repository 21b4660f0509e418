#!/bin/sh
# The image's entrypoint: `bot "$@"`, after turning each file of $SECRETS_DIR (default /run/secrets,
# where compose `secrets:` and a Kubernetes Secret volume put them) whose name is a variable's name
# (GITHUB_WEBHOOK_SECRET, BOT_SECRET_KEY, BOT_DATABASE_URL, ...) into that variable, unless the
# environment already sets it. Values reach the bot's environment only, never an argument.
set -eu
dir="${SECRETS_DIR:-/run/secrets}"
if [ -d "$dir" ]; then
    for file in "$dir"/*; do
        name="${file##*/}"
        case "$name" in
            [A-Z]*) ;;
            *) continue ;;
        esac
        case "$name" in
            *[!A-Z0-9_]*) continue ;;
        esac
        [ -f "$file" ] || continue
        eval "current=\${$name:-}"  # safe: the name is [A-Z][A-Z0-9_]*
        if [ -z "$current" ]; then
            value="$(cat "$file")"
            export "$name=$value"
        fi
    done
fi
exec bot "$@"
