def test_wrap(same):
    same("wrap", "-w", "12", stdin="a b c d e f g h i j k l m n o p\n\nq r s\n")
    same("wrap", "-w", "4", stdin="tiny enormous x")
