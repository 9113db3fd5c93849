/* hot_outside(n): a count-down loop of n iterations, placed inside a valid ELF
 * note (name "HOT", type 0x484f54) whose descriptor is the machine code. The
 * note section is laid out before .init, i.e. before every function symbol. */
	.section .note.gmon.hot,"a",@note
	.p2align 2
	.long 4			/* namesz */
	.long 2f - 1f		/* descsz */
	.long 0x484f54		/* type */
	.asciz "HOT"
1:
	.globl hot_outside
	.type hot_outside, @function
hot_outside:
	mov %rdi, %rax
3:	dec %rax
	jnz 3b
	ret
	.size hot_outside, . - hot_outside
	.p2align 2
2:
	.section .note.GNU-stack,"",@progbits
