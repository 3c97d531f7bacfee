"""The object store: one small interface over a local folder and any S3 endpoint (SeaweedFS in the embedded stack).

Every artifact postgame writes is addressed by a URI (`s3://bucket/key` or `file:///abs/key`) and, where it is
immutable, by the sha256 of its bytes, so that lineage can follow it from a model back to the log objects.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import urlparse


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    etag: str
    size: int


class ObjectStore(Protocol):
    uri: str

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]: ...
    def open(self, key: str) -> BinaryIO: ...
    def get(self, key: str) -> bytes: ...
    def put(self, key: str, data: bytes) -> ObjectInfo: ...
    def put_file(self, key: str, path: str | Path) -> ObjectInfo: ...
    def exists(self, key: str) -> bool: ...
    def delete(self, key: str) -> None: ...
    def url(self, key: str) -> str: ...


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LocalStore:
    """A folder as an object store. Writes are atomic (temp file + rename); the ETag is the md5 like S3's."""

    def __init__(self, root: str | Path):
        self.root = Path(root).absolute()
        self.uri = self.root.as_uri()

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if self.root.resolve() not in path.parents and path != self.root.resolve():
            raise ValueError(f"key {key!r} escapes the store root {self.root}")
        return path

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        if not self.root.exists():
            return
        for path in sorted(p for p in self.root.rglob("*") if p.is_file() and ".tmp-" not in p.name):
            key = path.relative_to(self.root).as_posix()
            if key.startswith(prefix):
                stat = path.stat()
                yield ObjectInfo(key=key, etag=f"{stat.st_size:x}-{stat.st_mtime_ns:x}", size=stat.st_size)

    def open(self, key: str) -> BinaryIO:
        return open(self._path(key), "rb")

    def get(self, key: str) -> bytes:
        return self._path(key).read_bytes()

    def put(self, key: str, data: bytes) -> ObjectInfo:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        stat = path.stat()
        return ObjectInfo(key=key, etag=f"{stat.st_size:x}-{stat.st_mtime_ns:x}", size=stat.st_size)

    def put_file(self, key: str, path: str | Path) -> ObjectInfo:
        """Copy a local file in (atomically), without holding it in memory."""
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".tmp-{target.name}.")
        os.close(fd)
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)
        stat = target.stat()
        return ObjectInfo(key=key, etag=f"{stat.st_size:x}-{stat.st_mtime_ns:x}", size=stat.st_size)

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def url(self, key: str) -> str:
        return self._path(key).as_uri()

    def remove_all(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class S3Store:
    """A bucket on an S3 endpoint, through boto3. The bucket is created on first write if missing."""

    def __init__(
        self,
        bucket: str,
        *,
        endpoint_url: str | None,
        access_key_id: str | None,
        secret_access_key: str | None,
        region: str = "us-east-1",
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        max_attempts: int = 3,
    ):
        import boto3
        from botocore.config import Config as BotoConfig

        self.bucket = bucket
        self.uri = f"s3://{bucket}"
        self.client = boto3.client(
            "s3",
            endpoint_url=endpoint_url or None,
            aws_access_key_id=access_key_id or None,
            aws_secret_access_key=secret_access_key or None,
            region_name=region,
            config=BotoConfig(
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                retries={"max_attempts": max_attempts, "mode": "standard"},
                s3={"addressing_style": "path"},
            ),
        )
        self._bucket_ready = False

    def ensure_bucket(self) -> None:
        if self._bucket_ready:
            return
        from botocore.exceptions import ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError:
            self.client.create_bucket(Bucket=self.bucket)
        self._bucket_ready = True

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        from botocore.exceptions import ClientError

        paginator = self.client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                for obj in page.get("Contents", []):
                    yield ObjectInfo(key=obj["Key"], etag=obj["ETag"].strip('"'), size=int(obj["Size"]))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "NoSuchBucket":
                return
            raise

    def open(self, key: str) -> BinaryIO:
        return self.client.get_object(Bucket=self.bucket, Key=key)["Body"]

    def get(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def put(self, key: str, data: bytes) -> ObjectInfo:
        self.ensure_bucket()
        resp = self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        return ObjectInfo(key=key, etag=resp["ETag"].strip('"'), size=len(data))

    def put_file(self, key: str, path: str | Path) -> ObjectInfo:
        """Upload a local file in parts (multipart above 64 MiB), without holding it in memory."""
        from boto3.s3.transfer import TransferConfig

        self.ensure_bucket()
        config = TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=64 << 20, max_concurrency=2)
        self.client.upload_file(str(path), self.bucket, key, Config=config)
        head = self.client.head_object(Bucket=self.bucket, Key=key)
        return ObjectInfo(key=key, etag=head["ETag"].strip('"'), size=int(head["ContentLength"]))

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
            return True
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound", "NoSuchBucket"):
                return False
            raise

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=key)

    def url(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"


def split_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix` -> (`s3://bucket`, `some/prefix`); a folder path -> (folder, '')."""
    parsed = urlparse(uri)
    if parsed.scheme == "s3":
        return f"s3://{parsed.netloc}", parsed.path.lstrip("/")
    if parsed.scheme == "file":
        return parsed.path, ""
    return uri, ""


def open_store(
    uri: str, *, endpoint_url: str = "", access_key_id: str = "", secret_access_key: str = "", region: str = "us-east-1"
) -> ObjectStore:
    """A store for `s3://bucket` or a folder. Credentials fall back to the standard AWS env variables."""
    parsed = urlparse(uri)
    if parsed.scheme == "s3":
        return S3Store(
            parsed.netloc,
            endpoint_url=endpoint_url or os.environ.get("AWS_ENDPOINT_URL"),
            access_key_id=access_key_id or os.environ.get("AWS_ACCESS_KEY_ID"),
            secret_access_key=secret_access_key or os.environ.get("AWS_SECRET_ACCESS_KEY"),
            region=region,
        )
    if parsed.scheme in ("", "file"):
        return LocalStore(parsed.path if parsed.scheme == "file" else uri)
    raise ValueError(f"store uri {uri!r}: scheme {parsed.scheme!r} not supported (use s3://bucket or a folder)")
