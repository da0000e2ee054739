// Two decimals always: 1.5 becomes "1.50".
export const format = n => n.toFixed(2)
