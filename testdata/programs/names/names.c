/* Functions named with mangled symbols (asm labels), so that gprof's demangling
 * (binutils' bfd_demangle: Rust first, then C++, raw when neither applies) can be
 * compared with gmon gprof's: Rust legacy and v0, C++ templates, operators, lambdas,
 * abi tags, thunks, vtables and other special names, clone suffixes. */
volatile long sink;
void f0(int k) __asm__("_ZN4core3fmt5write17h0123456789abcdefE");
void f0(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f1(int k) __asm__("_ZN7mycrate3foo17h0011223344556677E");
void f1(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f2(int k) __asm__("_RNvCs1234_7mycrate3foo");
void f2(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f3(int k) __asm__("_RNvNtCs1234_7mycrate6module4func");
void f3(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f4(int k) __asm__("_ZN3foo3barE");
void f4(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f5(int k) __asm__("_Z4worki");
void f5(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f6(int k) __asm__("_ZL6helperi");
void f6(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f7(int k) __asm__("_Z1fPFviE");
void f7(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f8(int k) __asm__("_Z1fRA10_i");
void f8(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f9(int k) __asm__("_Z1fM1AFvvE");
void f9(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f10(int k) __asm__("_Z1gIJidEEvDpT_");
void f10(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f11(int k) __asm__("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC2Ev");
void f11(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f12(int k) __asm__("_ZZ4mainENKUlvE_clEv");
void f12(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f13(int k) __asm__("_ZN1AplERKS_");
void f13(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f14(int k) __asm__("_ZN1AcvbEv");
void f14(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f15(int k) __asm__("_ZNK1A3getEv");
void f15(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f16(int k) __asm__("_ZN1A3setEOS_");
void f16(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f17(int k) __asm__("_ZSt4moveIRiEONSt16remove_referenceIT_E4typeEOS2_");
void f17(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f18(int k) __asm__("_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv");
void f18(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f19(int k) __asm__("_ZNSt6vectorIiSaIiEE9push_backERKi");
void f19(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f20(int k) __asm__("_Z5mixinIiEDTplfp_fp_ET_");
void f20(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f21(int k) __asm__("_ZThn8_N1B1fEv");
void f21(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f22(int k) __asm__("_ZTV1A");
void f22(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f23(int k) __asm__("_GLOBAL__sub_I_main");
void f23(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f24(int k) __asm__("_Z3barv.cold");
void f24(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f25(int k) __asm__("_Z3bazv.constprop.0");
void f25(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f26(int k) __asm__("_ZN1N1fB5cxx11Ev");
void f26(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f27(int k) __asm__("_Z1hPKc");
void f27(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f28(int k) __asm__("_Z1kIiLi3EEvv");
void f28(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f29(int k) __asm__("_Z1lDn");
void f29(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f30(int k) __asm__("not_mangled");
void f30(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f31(int k) __asm__("_Znotreally");
void f31(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f32(int k) __asm__("_ZTSN1a1bE");
void f32(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f33(int k) __asm__("_ZGVZ4mainE1x");
void f33(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f34(int k) __asm__("_ZTWN1a1xE");
void f34(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f35(int k) __asm__("_ZTISt6vectorIiSaIiEE");
void f35(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f36(int k) __asm__("_ZTv0_n24_N1B1fEv");
void f36(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f37(int k) __asm__("_ZTch0_h16_N1D1fEv");
void f37(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f38(int k) __asm__("_ZN5Outer5InnerIiE3getEv");
void f38(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f39(int k) __asm__("_ZNKSt8functionIFviEEclEi");
void f39(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
void f40(int k) __asm__("_RINvCs1234_7mycrate4funcpE");
void f40(int k) { for (long j = 0; j < k * 20000L; j++) sink += j; }
int main(void) {
  for (int r = 0; r < 20; r++) {
    f0(1);
    f1(2);
    f2(3);
    f3(4);
    f4(5);
    f5(6);
    f6(7);
    f7(1);
    f8(2);
    f9(3);
    f10(4);
    f11(5);
    f12(6);
    f13(7);
    f14(1);
    f15(2);
    f16(3);
    f17(4);
    f18(5);
    f19(6);
    f20(7);
    f21(1);
    f22(2);
    f23(3);
    f24(4);
    f25(5);
    f26(6);
    f27(7);
    f28(1);
    f29(2);
    f30(3);
    f31(4);
    f32(5);
    f33(6);
    f34(7);
    f35(1);
    f36(2);
    f37(3);
    f38(4);
    f39(5);
    f40(6);
  }
  return 0;
}
