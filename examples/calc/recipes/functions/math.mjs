export const functions = {
  abs: Math.abs,
  sqrt: Math.sqrt,
  max: Math.max,
  min: Math.min
}
