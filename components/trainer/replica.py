"""One task of a Trainer cluster, as the launcher starts it on every machine.

`python -m components.trainer.replica --inputs JSON --outputs JSON
--exec-properties JSON` trains in this process, in the role `TF_CONFIG`
gives it (chief, worker or ps).
"""

import argparse
import json
import logging
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m components.trainer.replica")
    parser.add_argument("--inputs", required=True, help="Input artifacts, as TFX JSON.")
    parser.add_argument("--outputs", required=True, help="Output artifacts, as TFX JSON.")
    parser.add_argument("--exec-properties", required=True, help="Trainer parameters, JSON.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    from tfx.types import artifact_utils

    from components.trainer.executor import train_in_process

    train_in_process(
        artifact_utils.parse_artifact_dict(args.inputs),
        artifact_utils.parse_artifact_dict(args.outputs),
        json.loads(args.exec_properties),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
