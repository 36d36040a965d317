"""robodyn.base.digest: the built-in SHA-256 below LARGE_BYTES and hashlib's above give hashlib's digests."""

import hashlib

import pytest

from robodyn.base.digest import LARGE_BYTES, sha256, sha256_hex


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 4096, LARGE_BYTES - 1, LARGE_BYTES, LARGE_BYTES + 7])
def test_the_digests_are_hashlibs(size):
    data = bytes((i * 7 + size) % 256 for i in range(size))
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert sha256(data).digest() == hashlib.sha256(data).digest()


def test_a_hash_object_takes_updates():
    h = sha256()
    for part in (b"robodyn ", b"parsed ", b"model"):
        h.update(part)
    assert h.hexdigest() == hashlib.sha256(b"robodyn parsed model").hexdigest()
