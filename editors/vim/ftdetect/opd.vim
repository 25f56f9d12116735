" Vim file type detection for .opd programs (the opdc compiler).
" SPDX-License-Identifier: Apache-2.0
autocmd BufRead,BufNewFile *.opd setfiletype opd
