package p;

public class Api {
    public static int twice(int x) {
        return 2 * x;
    }
}
