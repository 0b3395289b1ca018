// Compiled with: javac --release 17 -g -d ../classes j17/Shapes.java
public sealed interface Shapes permits Shapes.Circle, Shapes.Square {
    record Circle(double r) implements Shapes {}

    record Square(long side) implements Shapes {
        public Square {
            if (side < 0) {
                throw new IllegalArgumentException("side " + side);
            }
        }
    }

    enum Color { RED, GREEN, BLUE }

    static double area(Shapes s) {
        if (s instanceof Circle c) {
            return Math.PI * c.r() * c.r();
        }
        Square q = (Square) s;
        return q.side() * q.side();
    }

    static String name(String k) {
        return switch (k) {
            case "a", "b" -> "first";
            case "zebra" -> "last";
            default -> """
                other
                """ + k;
        };
    }

    static int color(Color c) {
        return switch (c) {
            case RED -> 1;
            case GREEN -> 2;
            case BLUE -> 3;
        };
    }
}
