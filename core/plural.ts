/**
 * Counted nouns in messages people read: "1 card", "2 cards", "1 dependency", "3 dependencies". Pure
 * English inflection for the few words Baton counts; no locale, no I/O.
 */

/** `n` and `word` in the number it needs; `many` for a plural not made by -s, -es or y → -ies. */
export function plural(n: number, word: string, many?: string): string {
	if (n === 1) {
		return `${n} ${word}`;
	}
	if (many !== undefined) {
		return `${n} ${many}`;
	}
	if (/[^aeiou]y$/.test(word)) {
		return `${n} ${word.slice(0, -1)}ies`;
	}
	return `${n} ${/(s|x|ch|sh)$/.test(word) ? `${word}es` : `${word}s`}`;
}
