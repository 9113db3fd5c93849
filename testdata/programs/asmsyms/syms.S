/* Local functions with tricky names, each: frame, call mcount (as gcc -pg does), a
 * count-down loop of rdi * WEIGHT iterations, return. asm_driver (global) calls each. */

	.macro FUNC name, weight
	.type "\name", @function
"\name":
	push	%rbp
	mov	%rsp, %rbp
	call	mcount@PLT
	mov	%rdi, %rax
	imul	$\weight, %rax
1:	dec	%rax
	jnz	1b
	pop	%rbp
	ret
	.size "\name", . - "\name"
	.endm

	.text
	.p2align 4
	FUNC aa.constprop.0, 3
	.p2align 4
	FUNC bb, 2
	.p2align 4
	FUNC cc.constprop.0, 4
	.p2align 4
	FUNC dd.x, 2
	.p2align 4
	FUNC ee.part.0, 3
	.p2align 4
	FUNC ff.isra.0, 2
	.p2align 4
	FUNC gg.1, 3
	.p2align 4
	FUNC hh$x, 2
	.p2align 4
	FUNC ii.clone.3, 3
	.p2align 4
	FUNC jj.cold, 2
	.p2align 4
	FUNC kk.12.34, 3

	.globl	asm_driver
	.type	asm_driver, @function
	.p2align 4
asm_driver:
	push	%rbp
	mov	%rsp, %rbp
	call	mcount@PLT
	push	%rbx
	sub	$8, %rsp
	mov	%rdi, %rbx
	.irp f, aa.constprop.0, bb, cc.constprop.0, dd.x, ee.part.0, ff.isra.0, gg.1, hh$x, ii.clone.3, jj.cold, kk.12.34
	mov	%rbx, %rdi
	call	"\f"
	.endr
	add	$8, %rsp
	pop	%rbx
	pop	%rbp
	ret
	.size	asm_driver, . - asm_driver

	.section .note.GNU-stack,"",@progbits
