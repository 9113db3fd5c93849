/* Hot local symbols for gprof's name filter. In .strtab each name is followed
 * by the next one defined here (checked by extra-cases.sh with readelf):
 *   aa.constprop.0 then bb_next       -> kept (bb_next has no dot)
 *   cc.constprop.0 then dd.x          -> rejected by gprof's scan past the NUL
 *   ee.part.0                         -> always rejected (time goes to dd.x's owner)
 *   lbl_notype (no .type)             -> a symbol, but not a function: -D drops it */
	.text
	.globl	asm_entry
	.type	asm_entry, @function
asm_entry:
	/* Referenced in this order, the names enter .strtab in this order. */
	call	aa.constprop.0
	call	bb_next
	call	cc.constprop.0
	call	dd.x
	call	ee.part.0
	ret
	.size	asm_entry, .-asm_entry

	.type	aa.constprop.0, @function
aa.constprop.0:
	mov	$60000000, %rcx
1:	dec	%rcx
	jnz	1b
	ret
	.size	aa.constprop.0, .-aa.constprop.0

	.type	bb_next, @function
bb_next:
	ret

	.type	cc.constprop.0, @function
cc.constprop.0:
	mov	$60000000, %rcx
1:	dec	%rcx
	jnz	1b
	ret
	.size	cc.constprop.0, .-cc.constprop.0

	.type	dd.x, @function
dd.x:
	ret

	.type	ee.part.0, @function
ee.part.0:
	mov	$30000000, %rcx
lbl_notype:
	dec	%rcx
	jnz	lbl_notype
	ret
	.size	ee.part.0, .-ee.part.0
	.section	.note.GNU-stack,"",@progbits
