;; The stream fast path's inner loop (see fast-delta.ts): runs of chat chunk events that are the
;; learned bytes, a text with no quote or backslash, and the learned bytes again, read 16 bytes at a
;; time. Compiled by `npm run wasm` into fast-delta-wasm.ts.
(module
  (memory (export "memory") 1)
  ;; Why a run stopped: 0 no whole event left, 1 a text with an escape (the caller reads that
  ;; event), 2 an event of another shape.
  (global $stop (export "stop") (mut i32) (i32.const 0))
  ;; Where the texts copied out end.
  (global $outEnd (export "outEnd") (mut i32) (i32.const 0))

  ;; Whether the $len bytes at $a and $b are equal.
  (func $equal (param $a i32) (param $b i32) (param $len i32) (result i32)
    (local $i i32)
    (if (i32.lt_u (local.get $len) (i32.const 16))
      (then
        (block $done
          (loop $bytes
            (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
            (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i))) (i32.load8_u (i32.add (local.get $b) (local.get $i))))
              (then (return (i32.const 0))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $bytes)))
        (return (i32.const 1))))
    (block $done
      (loop $blocks
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $len)))
        (if (i32.eqz (i8x16.all_true (i8x16.eq (v128.load (i32.add (local.get $a) (local.get $i))) (v128.load (i32.add (local.get $b) (local.get $i))))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $blocks)))
    ;; The last 16 bytes, overlapping the blocks before them.
    (local.set $i (i32.sub (local.get $len) (i32.const 16)))
    (i8x16.all_true (i8x16.eq (v128.load (i32.add (local.get $a) (local.get $i))) (v128.load (i32.add (local.get $b) (local.get $i))))))

  ;; Reads events from $at to $limit, each the $beforeLen bytes at $before, a text, and the
  ;; $afterLen bytes at $after; copies their texts one after another to $out. Returns where it
  ;; stopped ($stop says why, $outEnd where the texts end). Reads up to 16 bytes past $limit, and
  ;; writes up to 16 past the texts: the caller leaves room.
  (func (export "run") (param $at i32) (param $limit i32) (param $before i32) (param $beforeLen i32) (param $after i32) (param $afterLen i32) (param $out i32) (result i32)
    (local $open i32) (local $p i32) (local $m i32) (local $close i32) (local $n i32) (local $i i32)
    (local $quote v128) (local $backslash v128) (local $v v128)
    (local.set $quote (i8x16.splat (i32.const 0x22)))
    (local.set $backslash (i8x16.splat (i32.const 0x5c)))
    (global.set $stop (i32.const 0))
    (block $end
      (loop $event
        (local.set $open (i32.add (local.get $at) (local.get $beforeLen)))
        (br_if $end (i32.gt_u (i32.add (local.get $open) (local.get $afterLen)) (local.get $limit)))
        (if (i32.eqz (call $equal (local.get $at) (local.get $before) (local.get $beforeLen)))
          (then (global.set $stop (i32.const 2)) (br $end)))
        ;; The text's first quote or backslash.
        (local.set $p (local.get $open))
        (block $found
          (loop $scan
            (local.set $v (v128.load (local.get $p)))
            (local.set $m (i8x16.bitmask (v128.or (i8x16.eq (local.get $v) (local.get $quote)) (i8x16.eq (local.get $v) (local.get $backslash)))))
            (br_if $found (local.get $m))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br_if $end (i32.ge_u (local.get $p) (local.get $limit)))
            (br $scan)))
        (local.set $close (i32.add (local.get $p) (i32.ctz (local.get $m))))
        (br_if $end (i32.gt_u (i32.add (local.get $close) (local.get $afterLen)) (local.get $limit)))
        (if (i32.eq (i32.load8_u (local.get $close)) (i32.const 0x5c))
          (then (global.set $stop (i32.const 1)) (br $end)))
        (if (i32.eqz (call $equal (local.get $close) (local.get $after) (local.get $afterLen)))
          (then (global.set $stop (i32.const 2)) (br $end)))
        (local.set $n (i32.sub (local.get $close) (local.get $open)))
        (local.set $i (i32.const 0))
        (block $copied
          (loop $copy
            (br_if $copied (i32.ge_u (local.get $i) (local.get $n)))
            (v128.store (i32.add (local.get $out) (local.get $i)) (v128.load (i32.add (local.get $open) (local.get $i))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $copy)))
        (local.set $out (i32.add (local.get $out) (local.get $n)))
        (local.set $at (i32.add (local.get $close) (local.get $afterLen)))
        (br $event)))
    (global.set $outEnd (local.get $out))
    (local.get $at))
)
