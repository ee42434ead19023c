"""Spark's way to the object store: Hadoop's `s3a` file system, only when the lakehouse uses one.

`hadoop-aws` must match the Hadoop that pyspark ships (hadoop-client 3.4.2 for pyspark 4.1.1).
It depends on the AWS SDK v2 `bundle` (642 MB: every AWS service's client), which the engine
replaces by the SDK modules s3a uses (`S3A_PACKAGES`, `S3A_EXCLUDES`). They are resolved and
cached with Delta's jars, and only for a lakehouse or a source on an object store. The `s3://`
scheme the store writes is mapped to `s3a`, so Spark and delta-rs name a table by the same URI.

Credentials stay references here too: with a credentials file, the driver's and the executors'
JVMs are told the file's path and section (`aws.sharedCredentialsFile`, `aws.profile`), never
the keys, and s3a asks the SDK's profile provider alone; without one, s3a's default chain reads
the `AWS_*` variables each JVM inherits, or an instance role (docs/cluster.md).
"""

from __future__ import annotations

from lakeguard.records.objectstore import ObjectStoreSettings

# the Hadoop version pyspark 4.1.1 ships (jars/hadoop-client-api-3.4.2.jar)
S3A_PACKAGE = "org.apache.hadoop:hadoop-aws:3.4.2"
# The SDK version hadoop-aws 3.4.2 is built against (the version of the bundle it depends on).
# Of the SDK, S3AFileSystem uses the S3 client (with its Apache HTTP client and the SDK's
# core, auth and regions), the transfer manager with the Netty async client (a copy, so a
# rename, of an object past `fs.s3a.multipart.threshold`; smaller ones are copied by the S3
# client) and STS (a profile's role, web identity); nothing else on our paths. The bundle holds
# besides every other service and shaded copies of its dependencies. hadoop-aws names two
# classes of the shaded HttpClient: its socket factory, through reflection that tolerates its
# absence (NetworkBinding: `fs.s3a.ssl.channel.mode` is ignored, the JVM's TLS used), and its
# URIBuilder, when s3a's own AssumedRoleCredentialProvider is given an STS endpoint (it then
# fails: NoClassDefFoundError). Client-side encryption needs the KMS and S3 encryption
# clients. docs/object-store.md says how to add what is left out.
AWS_SDK_VERSION = "2.29.52"
S3A_PACKAGES = (
    S3A_PACKAGE,
    *(
        f"software.amazon.awssdk:{m}:{AWS_SDK_VERSION}"
        for m in ("s3", "s3-transfer-manager", "sts")
    ),
)
# The bundle, and what the SDK's modules pull that Spark already ships (loaded from Spark's
# jars anyway: a driver and an executor look in their parent class loader first).
S3A_EXCLUDES = (
    "software.amazon.awssdk:bundle",
    "io.netty:*",
    "org.apache.httpcomponents:*",
    "commons-codec:*",
)
PROFILE_PROVIDER = "software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider"


# Spark's Parquet writes (a batch's staging, its split) commit through Hadoop's
# FileOutputCommitter, whose default (v1) renames each file twice, task then job, and marks
# the folder with a `_SUCCESS` object: on an object store a rename is a copy and a delete. v2
# renames once, at task commit. Its job commit is not atomic, which costs nothing here: a staged
# folder is private to its attempt and read only once the write returned (a failed write's
# folder is swept, never read), and a retried task writes the same file name. Delta's own
# writes (a MERGE) do not use this committer. Three runs of a four-dataset job on SeaweedFS:
# 43.2 -> 40.8 s (medians of three).
STAGING_COMMIT = {
    "spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version": "2",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
}


def s3a_conf(settings: ObjectStoreSettings) -> dict[str, str]:
    """Spark conf that lets Spark read and write `s3://` tables on this object store."""
    hadoop = "spark.hadoop.fs.s3a."
    conf = {
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        **STAGING_COMMIT,
        hadoop + "path.style.access": str(settings.path_style).lower(),
        hadoop + "endpoint.region": settings.region,
    }
    if settings.endpoint:
        conf[hadoop + "endpoint"] = settings.endpoint
        conf[hadoop + "connection.ssl.enabled"] = str(
            settings.endpoint.startswith("https://")
        ).lower()
    if settings.credentials_file:
        conf[hadoop + "aws.credentials.provider"] = PROFILE_PROVIDER
    return conf


def s3a_java_options(settings: ObjectStoreSettings) -> list[str]:
    """JVM options naming the credentials file (a path and a section: no secret)."""
    if not settings.credentials_file:
        return []
    return [
        f"-Daws.sharedCredentialsFile={settings.credentials_file}",
        f"-Daws.profile={settings.profile}",
    ]
