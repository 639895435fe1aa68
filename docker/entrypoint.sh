#!/bin/sh
# deberta-serve image entrypoint: runs deberta-server with the arguments
# given. Without --model or --flagfile it serves the checkpoint mounted at
# /models when there is one (config.json + model.safetensors), else the
# built-in demo model.
set -eu
case " $* " in
  *" --model="*|*" --flagfile="*) ;;
  *)
    if [ -f /models/config.json ]; then
      set -- --model=/models "$@"
    else
      set -- --model=demo "$@"
    fi
    ;;
esac
exec /usr/local/bin/deberta-server --listen_address=0.0.0.0 "$@"
