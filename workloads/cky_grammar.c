/* cky_grammar.c -- a small English-like grammar in Chomsky normal form, with
 * the usual sources of ambiguity (prepositional-phrase attachment, noun
 * phrase and sentence coordination, words of several categories), its
 * sentence generator and the serial reference parser.
 *
 * Weights steer generation only; `recursive` rules are dropped beyond a
 * depth limit so that every derivation ends. */
#include <string.h>

#include "cky_grammar.h"
#include "internal.h"

const char *const _gcs_cky_nt_names[NT_COUNT] = {
    "S", "SC", "NP", "NPC", "NOM", "VP", "PP", "SBAR", "DET", "ADJ", "VT", "VS", "P", "CONJ", "COMP",
};

const cky_rule _gcs_cky_rules[] = {
    {NT_S, NT_NP, NT_VP, 12, 0},      /* S -> NP VP */
    {NT_S, NT_S, NT_SC, 1, 1},        /* S -> S SC          "..., and S" */
    {NT_SC, NT_CONJ, NT_S, 1, 0},     /* SC -> CONJ S */
    {NT_NP, NT_DET, NT_NOM, 8, 0},    /* NP -> DET NOM */
    {NT_NP, NT_NP, NT_PP, 4, 1},      /* NP -> NP PP        attachment ambiguity */
    {NT_NP, NT_NP, NT_NPC, 1, 1},     /* NP -> NP NPC       coordination */
    {NT_NPC, NT_CONJ, NT_NP, 1, 0},   /* NPC -> CONJ NP */
    {NT_NOM, NT_ADJ, NT_NOM, 3, 1},   /* NOM -> ADJ NOM */
    {NT_VP, NT_VT, NT_NP, 8, 0},      /* VP -> VT NP */
    {NT_VP, NT_VP, NT_PP, 4, 1},      /* VP -> VP PP */
    {NT_VP, NT_VS, NT_SBAR, 1, 1},    /* VP -> VS SBAR */
    {NT_SBAR, NT_COMP, NT_S, 1, 0},   /* SBAR -> COMP S */
    {NT_PP, NT_P, NT_NP, 1, 0},       /* PP -> P NP */
};
const int _gcs_cky_nrules = (int)(sizeof _gcs_cky_rules / sizeof _gcs_cky_rules[0]);

const cky_word _gcs_cky_lexicon[] = {
    {"john", NT_NP, 2}, {"mary", NT_NP, 2}, {"it", NT_NP, 1}, {"they", NT_NP, 1},
    {"the", NT_DET, 6}, {"a", NT_DET, 4}, {"every", NT_DET, 1}, {"some", NT_DET, 1}, {"her", NT_DET, 1},
    {"dog", NT_NOM, 3}, {"cat", NT_NOM, 3}, {"man", NT_NOM, 3}, {"telescope", NT_NOM, 2}, {"park", NT_NOM, 2},
    {"hill", NT_NOM, 2}, {"garden", NT_NOM, 1}, {"saw", NT_NOM, 1}, {"duck", NT_NOM, 2}, {"fish", NT_NOM, 2},
    {"book", NT_NOM, 1}, {"table", NT_NOM, 1},
    {"big", NT_ADJ, 2}, {"small", NT_ADJ, 2}, {"old", NT_ADJ, 2}, {"red", NT_ADJ, 1}, {"quick", NT_ADJ, 1},
    {"saw", NT_VT, 4}, {"sees", NT_VT, 3}, {"likes", NT_VT, 3}, {"watched", NT_VT, 2}, {"fish", NT_VT, 1},
    {"book", NT_VT, 1},
    {"sleeps", NT_VP, 2}, {"runs", NT_VP, 2}, {"duck", NT_VP, 1}, {"fish", NT_VP, 1}, {"left", NT_VP, 1},
    {"thinks", NT_VS, 2}, {"says", NT_VS, 2}, {"knows", NT_VS, 1},
    {"with", NT_P, 4}, {"in", NT_P, 3}, {"on", NT_P, 3}, {"near", NT_P, 2}, {"under", NT_P, 1},
    {"and", NT_CONJ, 3}, {"or", NT_CONJ, 1},
    {"that", NT_COMP, 1},
};
const int _gcs_cky_nlexicon = (int)(sizeof _gcs_cky_lexicon / sizeof _gcs_cky_lexicon[0]);

/* ---- distinct words ------------------------------------------------------------ */

static int word_of_entry[sizeof _gcs_cky_lexicon / sizeof _gcs_cky_lexicon[0]];
static const char *word_text[sizeof _gcs_cky_lexicon / sizeof _gcs_cky_lexicon[0]];
static uint32_t word_cats[sizeof _gcs_cky_lexicon / sizeof _gcs_cky_lexicon[0]];
static int nwords;
static pthread_once_t words_once = PTHREAD_ONCE_INIT;

static void index_words(void)
{
    for (int e = 0; e < _gcs_cky_nlexicon; e++) {
        int w;
        for (w = 0; w < nwords; w++)
            if (strcmp(word_text[w], _gcs_cky_lexicon[e].text) == 0)
                break;
        if (w == nwords)
            word_text[nwords++] = _gcs_cky_lexicon[e].text;
        word_of_entry[e] = w;
        word_cats[w] |= 1u << _gcs_cky_lexicon[e].nt;
    }
}

int _gcs_cky_nwords(void)
{
    pthread_once(&words_once, index_words);
    return nwords;
}

const char *_gcs_cky_word_text(int w)
{
    pthread_once(&words_once, index_words);
    return w >= 0 && w < nwords ? word_text[w] : NULL;
}

uint32_t _gcs_cky_word_cats(int w)
{
    pthread_once(&words_once, index_words);
    return w >= 0 && w < nwords ? word_cats[w] : 0;
}

/* ---- generation -------------------------------------------------------------------- */

#define GEN_DEPTH 10

static int gen_nt(uint64_t *rng, int nt, int depth, int *words, int n)
{
    if (n > CKY_MAX_LEN)
        return n;
    int lex_w = 0, rule_w = 0;
    for (int e = 0; e < _gcs_cky_nlexicon; e++)
        if (_gcs_cky_lexicon[e].nt == nt)
            lex_w += _gcs_cky_lexicon[e].weight;
    for (int k = 0; k < _gcs_cky_nrules; k++)
        if (_gcs_cky_rules[k].lhs == nt && !(depth >= GEN_DEPTH && _gcs_cky_rules[k].recursive))
            rule_w += _gcs_cky_rules[k].weight;
    /* beyond the depth limit a word wherever the category has one */
    if (depth >= GEN_DEPTH && lex_w > 0)
        rule_w = 0;
    /* a category's words weigh as much as one rule of weight 6 in total */
    int lex_share = lex_w > 0 ? 6 : 0;
    int pick = (int)(gcs_random_next(rng) % (uint64_t)(rule_w + lex_share));
    if (pick >= rule_w) {
        int p = (int)(gcs_random_next(rng) % (uint64_t)lex_w);
        for (int e = 0; e < _gcs_cky_nlexicon; e++) {
            if (_gcs_cky_lexicon[e].nt != nt)
                continue;
            if (p < _gcs_cky_lexicon[e].weight) {
                if (n < CKY_MAX_LEN)
                    words[n] = word_of_entry[e];
                return n + 1;
            }
            p -= _gcs_cky_lexicon[e].weight;
        }
    }
    for (int k = 0; k < _gcs_cky_nrules; k++) {
        const cky_rule *r = &_gcs_cky_rules[k];
        if (r->lhs != nt || (depth >= GEN_DEPTH && r->recursive))
            continue;
        if (pick < r->weight) {
            n = gen_nt(rng, r->left, depth + 1, words, n);
            return gen_nt(rng, r->right, depth + 1, words, n);
        }
        pick -= r->weight;
    }
    return n; /* not reached: the weights add up */
}

int _gcs_cky_generate(uint64_t seed, uint64_t index, int words[CKY_MAX_LEN])
{
    pthread_once(&words_once, index_words);
    uint64_t rng = wl_seed(seed, 1000003 + index);
    for (;;) {
        int n = gen_nt(&rng, NT_S, 0, words, 0);
        if (n >= CKY_MIN_LEN && n <= CKY_MAX_LEN)
            return n;
    }
}

/* ---- the serial reference -------------------------------------------------------- */

uint64_t _gcs_cky_count_reference(const int *words, int n)
{
    /* count[i][j][A], i < j: parse trees of words i..j-1 rooted at A */
    static _Thread_local uint64_t count[CKY_MAX_LEN][CKY_MAX_LEN + 1][NT_COUNT];
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j <= n; j++)
            memset(count[i][j], 0, sizeof count[i][j]);
    for (int i = 0; i < n; i++) {
        uint32_t cats = _gcs_cky_word_cats(words[i]);
        for (int a = 0; a < NT_COUNT; a++)
            count[i][i + 1][a] = (cats >> a) & 1;
    }
    for (int len = 2; len <= n; len++)
        for (int i = 0; i + len <= n; i++) {
            int j = i + len;
            for (int k = 0; k < _gcs_cky_nrules; k++) {
                const cky_rule *r = &_gcs_cky_rules[k];
                uint64_t sum = 0;
                for (int m = i + 1; m < j; m++)
                    sum += count[i][m][r->left] * count[m][j][r->right];
                count[i][j][r->lhs] += sum;
            }
        }
    return count[0][n][NT_S];
}
