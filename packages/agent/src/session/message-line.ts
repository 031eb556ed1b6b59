/**
 * The message entry line as pi writes it, `JSON.stringify({ type, id, parentId, timestamp,
 * message })`: for such a line the message's own JSON is the bytes between a fixed prefix and the
 * line's last `}`. Parsing the prefix and that text apart gives the very entry JSON.parse would
 * give for the line (the prefix holds plain strings only, and the message text parses as one JSON
 * value), and says where the message's bytes are, so a get_messages answer can send them as they
 * are instead of serialising the message again (see transport/json-pieces.ts).
 */

/** The prefix's strings: printable ASCII without `"` or `\`, so characters are bytes and nothing is escaped. */
const PREFIX = /^\{"type":"message","id":"[ !#-[\]-~]*","parentId":(?:null|"[ !#-[\]-~]*"),"timestamp":"[ !#-[\]-~]*","message":\{/;
/** The prefix is shorter than this unless its ids are unusually long (then the line is parsed whole). */
const PREFIX_LIMIT = 512;
/** The prefix's end; only the bytes up to it are decoded for the pattern. */
const MESSAGE_KEY = Buffer.from('"message":{');

export interface MessageLine {
  value: Record<string, unknown>;
  /** Where the message's JSON starts in the line's bytes. */
  messageStart: number;
}

/**
 * The entry of a message line in pi's shape (`bytes` without LF or CR; `ascii`: whether they are
 * pure ASCII, else valid UTF-8), or undefined for any other line: parse it whole then.
 */
export function parseMessageLine(bytes: Buffer, ascii: boolean): MessageLine | undefined {
  if (bytes[bytes.length - 1] !== 0x7d) return undefined;
  const key = bytes.indexOf(MESSAGE_KEY);
  if (key === -1 || key > PREFIX_LIMIT) return undefined;
  // Decoded as latin1, a UTF-8 sequence is characters the prefix's classes do not match.
  const head = bytes.toString("latin1", 0, key + MESSAGE_KEY.length);
  const match = PREFIX.exec(head);
  if (match === null) return undefined;
  const messageStart = match[0].length - 1;
  let message: unknown;
  try {
    // Decoded apart from the line: no string of the line is kept alive by what is parsed from it.
    message = JSON.parse(bytes.toString(ascii ? "latin1" : "utf8", messageStart, bytes.length - 1));
  } catch {
    // Not one JSON value (a duplicate "message" key, a corrupt line): the whole line decides.
    return undefined;
  }
  // The prefix parsed by JSON.parse itself, with the message in its place: the keys in the line's order.
  const value = JSON.parse(`${head.slice(0, messageStart)}null}`) as Record<string, unknown>;
  value["message"] = message;
  return { value, messageStart };
}
