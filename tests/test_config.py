"""The configuration object and the generated headers and images."""

import pytest

from soc.config import DEFAULT, ConfigError, SoCConfig
from sw import server_image


def test_default_is_valid_and_exported_to_c():
    import re
    h = DEFAULT.c_header()
    for name, value in DEFAULT.as_dict().items():
        assert re.search(rf"^#define TSOC_{name.upper()}\s+{value}$", h, re.M), name
    assert f"TSOC_PEAK_MACS_PER_CLOCK      {DEFAULT.np * DEFAULT.vw}" in h


@pytest.mark.parametrize("field,value,msg", [
    ("np", 3, "power of 2"),
    ("nt", 0, "power of 2"),
    ("vw", 6, "power of 2"),
    ("main_ram_size", 1001, "multiple of 4"),
    ("pcore_private_words", 12, "multiple of vw"),
    ("sys_clk_freq", 0, "positive"),
])
def test_bad_values_are_rejected_with_the_field_named(field, value, msg):
    with pytest.raises(ConfigError, match=f"{field}={value}.*{msg}"):
        SoCConfig(**{field: value})


def test_unknown_override_is_named():
    with pytest.raises(ConfigError, match="unknown configuration field.*bogus"):
        DEFAULT.with_overrides(bogus=1)


def test_server_image_round_trip_and_errors():
    payload = bytes(range(256)) * 3
    image = server_image.build_image(payload, 4096)
    assert server_image.parse_image(image) == payload
    with pytest.raises(server_image.ImageError, match="window holds"):
        server_image.build_image(payload, 512)
    bad = bytearray(image)
    bad[20] ^= 1
    with pytest.raises(server_image.ImageError, match="CRC"):
        server_image.parse_image(bytes(bad))
    with pytest.raises(server_image.ImageError, match="magic"):
        server_image.parse_image(b"\0" * 16)
    with pytest.raises(server_image.ImageError, match="truncated"):
        server_image.parse_image(image[:-1])
    assert "#define SERVER_IMAGE_MAGIC        0x56525354u" in server_image.c_header()


def test_cli_help_lists_commands():
    from sw.cli import build_parser
    text = build_parser().format_help()
    for cmd in ("sim", "soc", "bench"):
        assert cmd in text
