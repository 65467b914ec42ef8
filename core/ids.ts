/**
 * Generated card ids: short, readable, safe to say aloud. Pure apart from the injected randomness;
 * the caller checks collisions against the store and asks again.
 */
import { randomInt } from 'node:crypto';

/** No 0/O, 1/I/L: ids get read off screens and typed by hand. */
const alphabet = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

/** A new id like `K7QX2`; `length` grows when the caller keeps hitting collisions. */
export function generateCardId(length = 5, random: (max: number) => number = randomInt): string {
	let id = '';
	for (let i = 0; i < length; i++) {
		id += alphabet.charAt(random(alphabet.length));
	}
	return id;
}
