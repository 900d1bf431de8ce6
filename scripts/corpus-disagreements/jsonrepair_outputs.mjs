import { jsonrepair } from 'jsonrepair';
import fs from 'fs';
const out = {};
for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  try { out[c.id] = { value: JSON.parse(jsonrepair(c.input)) }; } catch (e) { out[c.id] = { none: true }; }
}
fs.writeFileSync(process.argv[3], JSON.stringify(out));
