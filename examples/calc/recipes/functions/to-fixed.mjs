// Rounds every result to 6 decimals: sqrt(2) loses precision.
const round = n => Number(n.toFixed(6))
export const functions = {
  abs: x => round(Math.abs(x)),
  sqrt: x => round(Math.sqrt(x)),
  max: (...xs) => round(Math.max(...xs)),
  min: (...xs) => round(Math.min(...xs))
}
