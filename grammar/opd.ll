/* opd.ll - Flex scanner of the .opd language (docs/language.md).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Re-entrant, no globals: the ParseDriver is the scanner's extra data. Each
 * rule fills a RawToken and returns its kind; the driver turns byte offsets
 * into source locations (YY_USER_ACTION) and converts literals, reporting
 * malformed ones itself so that the parser always gets a token.
 */
%{
#include "frontend/ParseDriver.h"
#include "OpdParser.hh"

using Tok = opdc::OpdParser::token;

#define YY_DECL int opd_scan(opdc::RawToken &tok, yyscan_t yyscanner)
#define YY_USER_ACTION yyextra->advance(yyleng);
%}

%option reentrant noyywrap nounput noinput batch never-interactive
%option 8bit nodefault warn
%option prefix="opd_"
%option extra-type="opdc::ParseDriver *"

DIGITS  [0-9]([0-9]|_)*
HEX     [0-9A-Fa-f]([0-9A-Fa-f]|_)*
EXP     [eE][+-]?{DIGITS}
ALNUM   [0-9A-Za-z_]
STRCHAR ([^"\\\n]|\\[^\n])

%%

[ \t\r\n\f\v]+                          { /* whitespace */ }
"//"[^\n]*                              { /* line comment */ }
"/*"([^*]|"*"+[^*/])*"*"+"/"            { /* block comment */ }
"/*"([^*]|"*"+[^*/])*"*"*               { yyextra->unterminatedComment(); }

\"{STRCHAR}*\"                  { return yyextra->scanString(tok, true); }
\"{STRCHAR}*\\?                 { return yyextra->scanString(tok, false); }

 /* Numbers. `1..n` is a range, not the float `1.` followed by `.n`. */
{DIGITS}/".."                           { return yyextra->scanInt(tok); }
{DIGITS}"."{DIGITS}?{EXP}?"f"?          { return yyextra->scanFloat(tok); }
"."{DIGITS}{EXP}?"f"?                   { return yyextra->scanFloat(tok); }
{DIGITS}{EXP}"f"?                       { return yyextra->scanFloat(tok); }
0[xX]{HEX}("i64")?                      { return yyextra->scanInt(tok); }
{DIGITS}("i64")?                        { return yyextra->scanInt(tok); }
 /* Anything else that starts like a number: `12abc`, `0x`, `1e+`, `1.5q`. */
[0-9]{ALNUM}*([eE][+-])?                |
({DIGITS}("."{DIGITS}?)?|"."{DIGITS}){EXP}{ALNUM}+ |
{DIGITS}"."{DIGITS}?[A-Za-z_]{ALNUM}*   |
"."{DIGITS}[A-Za-z_]{ALNUM}*            { return yyextra->scanBadNumber(tok); }

[A-Za-z_]{ALNUM}*                       { return yyextra->scanIdentifier(tok); }

"+="                                    { return Tok::TOK_PLUSEQ; }
"-="                                    { return Tok::TOK_MINUSEQ; }
"*="                                    { return Tok::TOK_STAREQ; }
"/="                                    { return Tok::TOK_SLASHEQ; }
"<<="                                   { return Tok::TOK_SHLEQ; }
">>="                                   { return Tok::TOK_SHREQ; }
"&="                                    { return Tok::TOK_AMPEQ; }
"|="                                    { return Tok::TOK_PIPEEQ; }
"^="                                    { return Tok::TOK_CARETEQ; }
"<<"                                    { return Tok::TOK_SHL; }
">>"                                    { return Tok::TOK_SHR; }
"=="                                    { return Tok::TOK_EQ; }
"!="                                    { return Tok::TOK_NE; }
"<="                                    { return Tok::TOK_LE; }
">="                                    { return Tok::TOK_GE; }
"&&"                                    { return Tok::TOK_ANDAND; }
"||"                                    { return Tok::TOK_OROR; }
"->"                                    { return Tok::TOK_ARROW; }
"..="                                   { return Tok::TOK_DOTDOTEQ; }
".."                                    { return Tok::TOK_DOTDOT; }
"+"                                     { return Tok::TOK_PLUS; }
"-"                                     { return Tok::TOK_MINUS; }
"*"                                     { return Tok::TOK_STAR; }
"/"                                     { return Tok::TOK_SLASH; }
"%"                                     { return Tok::TOK_PERCENT; }
"<"                                     { return Tok::TOK_LT; }
">"                                     { return Tok::TOK_GT; }
"!"                                     { return Tok::TOK_NOT; }
"&"                                     { return Tok::TOK_AMP; }
"|"                                     { return Tok::TOK_PIPE; }
"^"                                     { return Tok::TOK_CARET; }
"~"                                     { return Tok::TOK_TILDE; }
"="                                     { return Tok::TOK_ASSIGN; }
"@"                                     { return Tok::TOK_AT; }
":"                                     { return Tok::TOK_COLON; }
","                                     { return Tok::TOK_COMMA; }
";"                                     { return Tok::TOK_SEMI; }
"."                                     { return Tok::TOK_DOT; }
"("                                     { return Tok::TOK_LPAREN; }
")"                                     { return Tok::TOK_RPAREN; }
"["                                     { return Tok::TOK_LBRACKET; }
"]"                                     { return Tok::TOK_RBRACKET; }
"{"                                     { return Tok::TOK_LBRACE; }
"}"                                     { return Tok::TOK_RBRACE; }

[\x80-\xff]+                            { yyextra->badCharacters(); }
[\0-\x08\x0e-\x1f\x7f]+                 { yyextra->badCharacters(); }
.                                       { yyextra->badCharacters(); }

%%
