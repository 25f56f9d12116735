" Vim syntax file for the .opd language (man/opd.5).
" SPDX-License-Identifier: Apache-2.0
" The words of the 'syntax keyword' lines are exactly the lexer's reserved
" words (ParseDriver::keywords); tests/unit/EditorGrammarTest.cpp checks that
" they agree.
if exists("b:current_syntax")
  finish
endif

syntax keyword opdDeclaration program import as const param set map dat block stencil kernel fn proc main
syntax keyword opdConditional if else
syntax keyword opdRepeat for in while loop over
syntax keyword opdStatement return break continue
syntax keyword opdKeyword let var from size halo base to along wrt checkpoints
syntax keyword opdStatement print printf fail swap write read solve adjoint tangent
syntax keyword opdAccess out inout inc min max sum
syntax keyword opdType f64 f32 i32 i64 bool str
syntax keyword opdBoolean true false

syntax keyword opdTodo contained TODO FIXME XXX NOTE
syntax match opdComment "//.*$" contains=opdTodo,@Spell
syntax region opdComment start="/\*" end="\*/" contains=opdTodo,@Spell
syntax match opdEscape contained "\\."
syntax match opdFormat contained "%[-+ 0#]*\d*\(\.\d\+\)\=[a-zA-Z%]"
syntax region opdString start=+"+ skip=+\\\\\|\\"+ end=+"+ contains=opdEscape,opdFormat,@Spell
syntax match opdNumber "\<0[xX][0-9A-Fa-f_]\+\(i64\)\=\>"
syntax match opdNumber "\<\d[0-9_]*\(i64\)\=\>"
syntax match opdFloat "\<\d[0-9_]*\.\(\.\)\@!\(\d[0-9_]*\)\=\([eE][+-]\=\d[0-9_]*\)\=f\="
syntax match opdFloat "\<\d[0-9_]*[eE][+-]\=\d[0-9_]*f\=\>"
syntax match opdFunction "\<\h\w*\ze\s*("

highlight default link opdDeclaration Structure
highlight default link opdConditional Conditional
highlight default link opdRepeat Repeat
highlight default link opdStatement Statement
highlight default link opdKeyword Keyword
highlight default link opdAccess StorageClass
highlight default link opdType Type
highlight default link opdBoolean Boolean
highlight default link opdTodo Todo
highlight default link opdComment Comment
highlight default link opdEscape SpecialChar
highlight default link opdFormat SpecialChar
highlight default link opdString String
highlight default link opdNumber Number
highlight default link opdFloat Float
highlight default link opdFunction Function

let b:current_syntax = "opd"
