#!/bin/bash
set -u
tar -xJf build/carry.tar.xz -C build && tar -xJf build/cnew.tar.xz -C build || exit 2
export NEW_SHA=1c23acde67e870d05f2d724b00b23cde1a9c8944
( while sleep 15; do tar -cJf $OUT/ab16.tar.xz res 2>/dev/null; done ) &
timeout 95 bash build/ab16.sh res/ab16 7 2>&1 | tee res/ab16.log
kill %1 2>/dev/null; tar -cJf $OUT/ab16.tar.xz res; ls -la $OUT
