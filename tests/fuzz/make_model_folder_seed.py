#!/usr/bin/env python3
"""Writes a seed for model_folder_fuzzer: value_info.json's text, init_net.pb and predict_net.pb
joined as FuzzedDataProvider splits them (each but the last ended by a backslash and a character,
every backslash inside doubled).

  tests/fuzz/make_model_folder_seed.py VALUE_INFO_JSON INIT_NET_PB PREDICT_NET_PB OUT
"""
import sys


def as_string(data: bytes) -> bytes:
    return data.replace(b"\\", b"\\\\") + b"\\;"


def main() -> None:
    value_info, init_net, predict_net, out = sys.argv[1:5]
    parts = [open(path, "rb").read() for path in (value_info, init_net, predict_net)]
    with open(out, "wb") as seed:
        seed.write(as_string(parts[0]) + as_string(parts[1]) + parts[2])


if __name__ == "__main__":
    main()
