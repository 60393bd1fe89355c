/* cky_grammar.h -- the bundled context-free grammar of the cky workload, in
 * Chomsky normal form (binary rules A -> B C and lexical rules A -> word),
 * and the sentence generator.  Data in cky_grammar.c. */
#ifndef GCSCALE_WORKLOADS_CKY_GRAMMAR_H
#define GCSCALE_WORKLOADS_CKY_GRAMMAR_H

#include <stdint.h>

enum {
    NT_S, NT_SC, NT_NP, NT_NPC, NT_NOM, NT_VP, NT_PP, NT_SBAR,
    NT_DET, NT_ADJ, NT_VT, NT_VS, NT_P, NT_CONJ, NT_COMP,
    NT_COUNT
};

typedef struct cky_rule {
    uint8_t lhs, left, right;
    uint8_t weight;     /* for generation */
    uint8_t recursive;  /* not chosen beyond the generator's depth limit */
} cky_rule;

typedef struct cky_word {
    const char *text;
    uint8_t nt;         /* one lexical rule nt -> text */
    uint8_t weight;
} cky_word;

extern const cky_rule _gcs_cky_rules[];
extern const int _gcs_cky_nrules;
extern const cky_word _gcs_cky_lexicon[];  /* a word with several categories appears once per category */
extern const int _gcs_cky_nlexicon;
extern const char *const _gcs_cky_nt_names[NT_COUNT];

/* Distinct words: _gcs_cky_word_text(w) for w in 0.._gcs_cky_nwords()-1; a sentence is
 * an array of word ids.  _gcs_cky_word_cats(w) is a bit set of the nonterminals
 * with a lexical rule for w. */
int _gcs_cky_nwords(void);
const char *_gcs_cky_word_text(int w);
uint32_t _gcs_cky_word_cats(int w);

#define CKY_MAX_LEN 40
#define CKY_MIN_LEN 12

/* Sentence `index` of a run with `seed`: a derivation from S, deterministic
 * in (seed, index), CKY_MIN_LEN..CKY_MAX_LEN words.  Returns its length. */
int _gcs_cky_generate(uint64_t seed, uint64_t index, int words[CKY_MAX_LEN]);

/* Serial reference: the number of parse trees of the sentence (mod 2^64),
 * by dense-array CKY without the collector. */
uint64_t _gcs_cky_count_reference(const int *words, int n);

#endif
