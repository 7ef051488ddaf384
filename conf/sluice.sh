#!/bin/sh
# sluice, a DNS forwarder that limits queries per registrable domain: the jar, run by Java.
# Installed as /usr/bin/sluice by scripts/package; scripts/sluice runs it on the tree's jar.
#   JAVA       the java command (default: java on the PATH)
#   JAVA_OPTS  options for the JVM, split into words (JAVA_OPTS=-Xmx512m)
#   SLUICE_JAR the jar (default: /usr/share/sluice/sluice.jar)
java=${JAVA:-java}
jar=${SLUICE_JAR:-/usr/share/sluice/sluice.jar}
# JDK 24 and later warn on sun.misc.Unsafe's memory access unless it is allowed, and Netty then does
# without it: its buffers cost more and udp-steering: cpu cannot be set up (docs/operations.md, "Which
# Java"). The option that allows it exists from JDK 23 on (JDK 17 refuses it): it is given there, before
# JAVA_OPTS so that JAVA_OPTS can say otherwise. The version is read from the JDK's release file,
# without starting a JVM.
unsafe=
if path=$(command -v "$java") && home=$(dirname "$(dirname "$(readlink -f "$path")")") \
    && major=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release" 2>/dev/null) \
    && [ "${major:-0}" -ge 23 ]; then
  unsafe=--sun-misc-unsafe-memory-access=allow
fi
# shellcheck disable=SC2086
exec "$java" $unsafe ${JAVA_OPTS:-} -jar "$jar" "$@"
