#!/usr/bin/env python3
"""Expand an AWS SAM template into the plain CloudFormation it deploys as, and print it
as JSON on stdout, so policy tests can check the resources SAM generates (functions'
roles, event source mappings, permissions) and not only what the template says.

Usage: scripts/expand-template.py TEMPLATE
       scripts/expand-template.py TEMPLATE TEMPLATE...   (a JSON object by path)

Uses the SAM translator that ships with cfn-lint (samtranslator), offline: no AWS call is
made; managed policy names resolve to placeholder ARNs. A template without the SAM
transform is printed as parsed. AWS::LanguageExtensions is not applied (the tests read
Fn::ToJsonString and friends as they are written).
"""
import json
import os
import sys

from cfnlint.decode import decode_str
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator


class _Policies:
    """Managed policy ARNs without IAM: arn:aws:iam::aws:policy/<name>."""

    def load(self):
        return {}

    def __getitem__(self, name):
        return f"arn:aws:iam::aws:policy/{name}"

    def get(self, name, default=None):
        return self[name]

    def __contains__(self, name):
        return True


def _plain(value):
    """cfn-lint's decoded nodes as plain dicts, lists and strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def main():
    # The translator asks boto for a region; no AWS call is made with it.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if len(sys.argv) == 2:
        out = expand(sys.argv[1])
    else:
        out = {path: expand(path) for path in sys.argv[1:]}
    json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)
    sys.stdout.write("\n")


def expand(path):
    with open(path, encoding="utf-8") as f:
        template, matches = decode_str(f.read())
    if matches or template is None:
        sys.exit(f"{path}: cannot parse: {[str(m) for m in matches]}")
    template = _plain(template)
    transform = template.get("Transform", [])
    transforms = transform if isinstance(transform, list) else [transform]
    if "AWS::Serverless-2016-10-31" in transforms:
        rest = [t for t in transforms if t != "AWS::Serverless-2016-10-31"]
        template["Transform"] = "AWS::Serverless-2016-10-31"
        # As `sam package` would: local code folders become S3 locations.
        for res in template.get("Resources", {}).values():
            props = res.get("Properties") or {}
            if res.get("Type") in ("AWS::Serverless::Function", "AWS::Serverless::LayerVersion"):
                for key in ("CodeUri", "ContentUri"):
                    if isinstance(props.get(key), str) and not props[key].startswith("s3://"):
                        props[key] = f"s3://bucket/{props[key]}"
        params = {"AWS::Region": "us-east-1", "AWS::Partition": "aws", "AWS::AccountId": "123456789012"}
        template = Translator(_Policies(), Parser()).translate(template, parameter_values=params)
        if rest:
            template["Transform"] = rest
    return template


if __name__ == "__main__":
    main()
