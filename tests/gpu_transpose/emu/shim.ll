; __truncsfbf2 for the host (round to nearest even; NaNs stay quiet NaNs): libgcc 12 has none,
; and g++ 12 cannot return __bf16, so it is written in IR.
define bfloat @__truncsfbf2(float %f) {
  %u = bitcast float %f to i32
  %abs = and i32 %u, 2147483647
  %isnan = icmp ugt i32 %abs, 2139095040
  %hi = lshr i32 %u, 16
  %odd = and i32 %hi, 1
  %bias = add i32 %odd, 32767
  %r = add i32 %u, %bias
  %rh = lshr i32 %r, 16
  %nanv = or i32 %hi, 64
  %sel = select i1 %isnan, i32 %nanv, i32 %rh
  %t = trunc i32 %sel to i16
  %b = bitcast i16 %t to bfloat
  ret bfloat %b
}
